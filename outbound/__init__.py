"""The one way the service calls a URL that a user (or a server a user named) supplied:
webhook endpoints, Lightning addresses' LNURL-pay servers, their callbacks and LUD-21
verify URLs.

    response = outbound.get(url, timeout=5, max_bytes=65536)   # raises UrlNotAllowed
    response = outbound.post(url, body=b"...", headers={...}, timeout=15, max_bytes=4096)

Every call checks the URL (HTTPS, no credentials, a real host name), resolves it, refuses
unless every address is public, then connects to the checked address itself (no second DNS
lookup), never follows a redirect, reads at most `max_bytes` of the answer and gives up
after `timeout` seconds in all. A kept-alive connection to the same host, pinned to the
address it was checked at, serves the next call for a few seconds without a new lookup
(outbound/keepalive.py). `OUTBOUND_ALLOW_LOOPBACK` additionally admits
http(s)://127.0.0.1, [::1] and localhost (tests and local development only).
"""

from __future__ import annotations

from django.conf import settings

from outbound import keepalive
from outbound.guard import (
    MAX_URL_LENGTH,
    CheckedUrl,
    Resolver,
    SystemResolver,
    Target,
    UrlNotAllowed,
    is_public_address,
    loopback_allowed,
    resolver_set,
    target_resolve,
    url_check,
)
from outbound.transport import Response, send

__all__ = [
    "MAX_URL_LENGTH",
    "CheckedUrl",
    "Resolver",
    "Response",
    "SystemResolver",
    "Target",
    "UrlNotAllowed",
    "get",
    "is_public_address",
    "keepalive",
    "loopback_allowed",
    "post",
    "request",
    "resolver_set",
    "target_resolve",
    "url_check",
]


def request(
    url: str,
    *,
    method: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float,
    max_bytes: int,
) -> Response:
    """Check `url` and send one request to the address it was checked at. Raises
    UrlNotAllowed before any connection when the URL may not be called."""
    return send(
        url_check(url),
        method=method,
        body=body,
        headers=headers,
        timeout=timeout,
        max_bytes=max_bytes,
        ca_bundle=settings.OUTBOUND_CA_BUNDLE,
    )


def get(url: str, *, headers: dict[str, str] | None = None, timeout: float, max_bytes: int) -> Response:
    return request(url, method="GET", headers=headers, timeout=timeout, max_bytes=max_bytes)


def post(url: str, *, body: bytes, headers: dict[str, str] | None = None, timeout: float, max_bytes: int) -> Response:
    return request(url, method="POST", body=body, headers=headers, timeout=timeout, max_bytes=max_bytes)

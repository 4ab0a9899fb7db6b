"""Who may read what the service says about its insides (/metrics, /healthz's figures): a
client on loopback, or one sending `Authorization: Bearer <token>` with the operator's token.

Loopback is the client's address as REST's rate limits see it (`accounts.sessions.client_ip`):
behind NUM_PROXIES trusted proxies, the address the nearest of them vouches for, so behind
nginx (whose own requests all come from loopback) it is the real client's. With no proxy
configured (NUM_PROXIES 0), a request carrying X-Forwarded-For came through a proxy the
service was not told about: its loopback peer is that proxy, not the client, and it does not
count as loopback. The token is compared in constant time and only read from the header (a
query string would land in access logs)."""

from __future__ import annotations

import enum
import hmac
import ipaddress

from django.conf import settings

from accounts.sessions import client_ip


class Access(enum.Enum):
    LOOPBACK = "loopback"
    TOKEN = "token"
    BAD_TOKEN = "bad_token"  # a bearer token was sent and is not the operator's
    PUBLIC = "public"


def operator_access(meta, token: str) -> Access:
    scheme, _, offered = meta.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() == "bearer" and offered:
        if token and hmac.compare_digest(offered.strip().encode(), token.encode()):
            return Access.TOKEN
        return Access.BAD_TOKEN
    if not (settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0) and meta.get("HTTP_X_FORWARDED_FOR"):
        return Access.PUBLIC
    try:
        address = ipaddress.ip_address(client_ip(meta))
    except ValueError:
        return Access.PUBLIC
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return Access.LOOPBACK if address.is_loopback else Access.PUBLIC

"""One HTTP POST to a vetted target, straight to the checked IP address.

urllib3 (what requests is built on) lets the connection go to an IP address while the
Host header, TLS SNI and certificate check use the hostname, so the address we checked
is the address we reach. Redirects are never followed; the response body is read only
up to a cap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import certifi
import urllib3

from webhooks.netguard import Target


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    duration_ms: int
    error: str
    excerpt: str

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def post(
    target: Target,
    *,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    max_bytes: int,
    ca_bundle: str = "",
) -> Outcome:
    started = time.monotonic()
    timeouts = urllib3.Timeout(connect=min(timeout, 10.0), read=timeout, total=timeout)
    if target.scheme == "https":
        pool: urllib3.HTTPConnectionPool = urllib3.HTTPSConnectionPool(
            str(target.address),
            target.port,
            timeout=timeouts,
            retries=False,
            maxsize=1,
            cert_reqs="CERT_REQUIRED",
            ca_certs=ca_bundle or certifi.where(),
            server_hostname=target.hostname,
            assert_hostname=target.hostname,
        )
    else:
        pool = urllib3.HTTPConnectionPool(str(target.address), target.port, timeout=timeouts, retries=False, maxsize=1)
    try:
        response = pool.urlopen(
            "POST",
            target.path,
            body=body,
            headers={**headers, "Host": target.host_header},
            redirect=False,
            retries=False,
            assert_same_host=False,
            preload_content=False,
        )
        try:
            excerpt = response.read(max_bytes, decode_content=False)
        finally:
            response.release_conn()
        status = response.status
        error = "" if 200 <= status < 300 else f"HTTP {status}"
        return Outcome(status, _ms(started), error, excerpt.decode("utf-8", "replace")[:max_bytes])
    except urllib3.exceptions.TimeoutError:
        return Outcome(None, _ms(started), f"No answer within {timeout:g} seconds.", "")
    except urllib3.exceptions.HTTPError as exc:
        return Outcome(None, _ms(started), _describe(exc), "")
    except OSError as exc:
        return Outcome(None, _ms(started), f"Connection failed: {exc.__class__.__name__}", "")
    finally:
        pool.close()


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _describe(exc: Exception) -> str:
    reason = getattr(exc, "reason", None) or exc
    text = f"{exc.__class__.__name__}: {reason}"
    return text[:300]

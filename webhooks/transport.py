"""One HTTP POST to a vetted target, straight to the checked IP address.

urllib3 (what requests is built on) lets the connection go to an IP address while the
Host header, TLS SNI and certificate check use the hostname, so the address we checked
is the address we reach. Redirects are never followed; the response body is read only
up to a cap.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from dataclasses import dataclass

import certifi
import urllib3
import urllib3.connection
from urllib3.util.ssl_match_hostname import CertificateError

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
    connection: urllib3.connection.HTTPConnection
    if target.scheme == "https":
        connection = urllib3.connection.HTTPSConnection(
            str(target.address),
            target.port,
            timeout=timeout,
            cert_reqs="CERT_REQUIRED",
            ca_certs=ca_bundle or certifi.where(),
            server_hostname=target.hostname,
            assert_hostname=target.hostname,
        )
    else:
        connection = urllib3.connection.HTTPConnection(str(target.address), target.port, timeout=timeout)
    # Socket time-outs apply per read, so an endpoint dripping a byte at a time could hold a
    # worker far longer; the watchdog ends the whole exchange at `timeout`.
    expired = threading.Event()
    watchdog = threading.Timer(timeout, _abort, args=(connection, expired))
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request(
            "POST", target.path, body=body, headers={**headers, "Host": target.host_header}, preload_content=False
        )
        response = connection.getresponse()
        excerpt = response.read(max_bytes, decode_content=False) if max_bytes else b""
        status = response.status
        error = "" if 200 <= status < 300 else f"HTTP {status}"
        return Outcome(status, _ms(started), error, excerpt.decode("utf-8", "replace"))
    except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError, CertificateError) as exc:
        if expired.is_set() or isinstance(exc, (TimeoutError, urllib3.exceptions.TimeoutError)):
            return Outcome(None, _ms(started), f"No answer within {timeout:g} seconds.", "")
        return Outcome(None, _ms(started), _describe(exc), "")
    except Exception as exc:  # anything else is still one failed attempt, logged as such
        return Outcome(None, _ms(started), f"Delivery error: {exc.__class__.__name__}", "")
    finally:
        watchdog.cancel()
        connection.close()


def _abort(connection: urllib3.connection.HTTPConnection, expired: threading.Event) -> None:
    expired.set()
    sock = getattr(connection, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _describe(exc: Exception) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "Connection refused."
    if isinstance(exc, CertificateError):
        return f"TLS certificate: {exc}"[:300]
    reason = getattr(exc, "reason", None) or exc
    return f"{exc.__class__.__name__}: {reason}"[:300]

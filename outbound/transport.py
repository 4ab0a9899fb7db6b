"""One HTTP request to a vetted target, straight to the checked IP address.

urllib3 (what requests is built on) lets the connection go to an IP address while the
Host header, TLS SNI and certificate check use the hostname, so the address we checked
is the address we reach, and the peer of the connection is compared with it before any
request goes out. Redirects are never followed (the caller sees the Location and may check
it as a new URL); the response body is read only up to a cap, and a watchdog ends the whole
exchange at the time-out. A connection whose answer was read to its end, and that the server
keeps open, serves the next request to the same host (outbound/keepalive.py).
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass

import certifi
import urllib3
import urllib3.connection
from urllib3.util.ssl_match_hostname import CertificateError

from outbound import keepalive
from outbound.guard import CheckedUrl, IPAddress, Target, UrlNotAllowed

# How a server that closed a kept-alive connection shows, before any answer came on it.
_CLOSED_BY_SERVER = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, http.client.RemoteDisconnected)


@dataclass(frozen=True)
class Response:
    """What came back. `status_code` is None when no HTTP answer arrived (`error` says why);
    `body` holds at most the requested number of bytes, `truncated` says there was more."""

    status_code: int | None
    duration_ms: int
    error: str
    body: bytes = b""
    truncated: bool = False
    location: str | None = None
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def is_redirect(self) -> bool:
        return self.status_code in (301, 302, 303, 307, 308) and bool(self.location)

    @property
    def excerpt(self) -> str:
        return self.body.decode("utf-8", "replace")


def send(
    url: CheckedUrl,
    *,
    method: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float,
    max_bytes: int,
    ca_bundle: str = "",
) -> Response:
    """One request for a checked URL: over a kept-alive connection to an address the URL's
    host was checked at, else over a new connection to the address it resolves to now
    (UrlNotAllowed when that is refused)."""
    key = keepalive.Key(url.scheme, url.hostname, url.port, ca_bundle)
    kept = keepalive.take(key, allowed=url.address_allowed)
    if kept is not None:
        try:
            return _exchange(url.at(kept.address), kept, key, method, body, headers, timeout, max_bytes)
        except _ClosedByServer:
            pass  # it closed the idle connection as we sent: once more, on a new connection
    target = url.resolve()
    kept = keepalive.Kept(_connection(target, timeout=timeout, ca_bundle=ca_bundle), target.address, time.monotonic())
    return _exchange(target, kept, key, method, body, headers, timeout, max_bytes)


class _ClosedByServer(Exception):
    pass


def _connection(target: Target, *, timeout: float, ca_bundle: str) -> urllib3.connection.HTTPConnection:
    if target.scheme == "https":
        return urllib3.connection.HTTPSConnection(
            str(target.address),
            target.port,
            timeout=timeout,
            cert_reqs="CERT_REQUIRED",
            ca_certs=ca_bundle or certifi.where(),
            server_hostname=target.hostname,
            assert_hostname=target.hostname,
        )
    return urllib3.connection.HTTPConnection(str(target.address), target.port, timeout=timeout)


def _peer_check(connection: urllib3.connection.HTTPConnection, address: IPAddress) -> None:
    """The socket must be connected to the very address that was checked."""
    peer = connection.sock.getpeername()[0] if connection.sock is not None else ""
    if ipaddress.ip_address(peer.split("%", 1)[0]) != address:
        raise UrlNotAllowed("The connection did not reach the address that was checked.")


def _exchange(
    target: Target,
    kept: keepalive.Kept,
    key: keepalive.Key,
    method: str,
    body: bytes | None,
    headers: dict[str, str] | None,
    timeout: float,
    max_bytes: int,
) -> Response:
    started = time.monotonic()
    connection = kept.connection
    # Socket time-outs apply per read, so a server dripping a byte at a time could hold a
    # worker far longer; the watchdog ends the whole exchange at `timeout`.
    expired = threading.Event()
    sockets: list[socket.socket] = []
    watchdog = threading.Timer(timeout, _abort, args=(connection, sockets, expired))
    watchdog.daemon = True
    watchdog.start()
    reusable = False
    try:
        if connection.sock is None:
            connection.connect()
        else:
            connection.sock.settimeout(timeout)
        _peer_check(connection, target.address)
        connection.request(
            method,
            target.path,
            body=body,
            headers={**(headers or {}), "Host": target.host_header},
            preload_content=False,
        )
        # http.client hands the socket over to the response (and drops it from the
        # connection) when the server will close it: keep it so the watchdog can still
        # cut off a body that drips in after the headers.
        if connection.sock is not None:
            sockets.append(connection.sock)
        response = connection.getresponse()
        content = response.read(max_bytes + 1, decode_content=False) if max_bytes else b""
        if expired.is_set():  # the watchdog cut the body short: an end of file, not an error
            return Response(None, _ms(started), f"No answer within {timeout:g} seconds.", timed_out=True)
        status = response.status
        error = "" if 200 <= status < 300 else f"HTTP {status}"
        # Kept only when the answer was read to its end and the server did not close it.
        reusable = len(content) <= max_bytes and response.closed and connection.sock is not None
        return Response(
            status,
            _ms(started),
            error,
            body=content[:max_bytes],
            truncated=len(content) > max_bytes,
            location=response.headers.get("Location"),
        )
    except UrlNotAllowed:
        raise
    except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError, CertificateError) as exc:
        if isinstance(exc, urllib3.exceptions.NewConnectionError) and not expired.is_set():
            # urllib3 counts it a connect time-out, but the connection was refused or unreachable.
            return Response(None, _ms(started), failure_text(exc.__cause__ or exc))
        if expired.is_set() or isinstance(exc, (TimeoutError, urllib3.exceptions.TimeoutError)):
            return Response(None, _ms(started), f"No answer within {timeout:g} seconds.", timed_out=True)
        if kept.reused and isinstance(exc, _CLOSED_BY_SERVER):
            raise _ClosedByServer from exc
        return Response(None, _ms(started), failure_text(exc))
    except Exception as exc:  # anything else is still one failed request, reported as such
        return Response(None, _ms(started), f"Request error: {exc.__class__.__name__}")
    finally:
        watchdog.cancel()
        if reusable and not expired.is_set():
            keepalive.put(key, kept)
        else:
            connection.close()


def _abort(
    connection: urllib3.connection.HTTPConnection, sockets: list[socket.socket], expired: threading.Event
) -> None:
    expired.set()
    for sock in [getattr(connection, "sock", None), *sockets]:
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def failure_text(exc: BaseException) -> str:
    """What failed, in words a receiver's operator acts on: the delivery log shows it."""
    if isinstance(exc, ConnectionRefusedError):
        return "Connection refused."
    tls = _tls_failure(exc)
    if tls is not None:
        return f"TLS: {tls}"[:300]
    reason = getattr(exc, "reason", None) or exc
    return f"{exc.__class__.__name__}: {reason}"[:300]


def _tls_failure(exc: BaseException | None) -> str | None:
    """The TLS handshake's own words (bad certificate, wrong name, no shared protocol), however
    urllib3 wrapped them."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, CertificateError):
            return f"certificate: {exc}"
        if isinstance(exc, ssl.SSLCertVerificationError):
            return f"certificate not trusted: {exc.verify_message or exc.reason}"
        if isinstance(exc, ssl.SSLError | urllib3.exceptions.SSLError):
            return str(getattr(exc, "reason", None) or exc)
        exc = (
            exc.__cause__
            or exc.__context__
            or (exc.args[0] if exc.args and isinstance(exc.args[0], BaseException) else None)
        )
        seen += 1
    return None

"""Many requests in flight from one synchronous caller: an asyncio event loop on a thread of
its own, with an aiohttp client, sends them while the caller goes on (webhook delivery's
pass, webhooks/passes.py).

    sender = ConcurrentSender()
    future = sender.post(url, body=b"...", headers={...}, timeout=15, max_bytes=4096)
    ...
    response = future.result()   # an outbound.Response, or UrlNotAllowed raised
    sender.close()

Every request passes the checks `outbound.post` makes (outbound/guard.py): the URL is checked
(HTTPS, no credentials, a real host name), its host resolved and refused unless every address
is public, and the connection goes to exactly the checked address: the client's resolver
answers only with the address a host was checked at (pinned for the sender's life, which is
one pass, shorter than keepalive.PIN_SECONDS), so the hostname is sent only as Host header and
TLS SNI and a DNS answer that changes meanwhile is never called. Redirects are never followed,
at most `max_bytes` of the answer is read (undecoded), and the whole exchange, the DNS look-up
included, ends at `timeout`. Kept-alive connections are reused within the sender's life.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
import ssl
import threading
import time
from typing import Any

import aiohttp
import certifi
from aiohttp.abc import AbstractResolver, ResolveResult

from outbound.guard import CheckedUrl, IPAddress, UrlNotAllowed, url_check
from outbound.keepalive import IDLE_SECONDS
from outbound.transport import Response, failure_text


class _PinnedResolver(AbstractResolver):
    """The client's only resolver: a host's checked address, or nothing."""

    def __init__(self) -> None:
        self.pins: dict[tuple[str, int], IPAddress] = {}

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        address = self.pins.get((host.lower(), port))
        if address is None:
            raise OSError(f"{host} was not checked")
        return [
            ResolveResult(
                hostname=host,
                host=str(address),
                port=port,
                family=socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        pass


class ConcurrentSender:
    """An event loop on its own thread with one aiohttp session; `post` may be called from
    any thread and answers with a concurrent.futures.Future."""

    def __init__(self, *, ca_bundle: str = "") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="outbound-sender", daemon=True)
        self._thread.start()
        self._resolver = _PinnedResolver()
        self._ca_bundle = ca_bundle
        self._session: aiohttp.ClientSession = asyncio.run_coroutine_threadsafe(self._open(), self._loop).result(10)

    async def _open(self) -> aiohttp.ClientSession:
        context = ssl.create_default_context(cafile=self._ca_bundle or certifi.where())
        connector = aiohttp.TCPConnector(
            resolver=self._resolver,
            use_dns_cache=False,
            ssl=context,
            limit=0,  # the caller bounds what is in flight
            keepalive_timeout=IDLE_SECONDS,
        )
        return aiohttp.ClientSession(
            connector=connector,
            auto_decompress=False,
            skip_auto_headers=("Accept-Encoding",),
            trust_env=False,
        )

    def post(
        self, url: str, *, body: bytes, headers: dict[str, str], timeout: float, max_bytes: int
    ) -> concurrent.futures.Future[Response]:
        """Send one POST; the future holds its Response, or raises UrlNotAllowed when the URL
        may not be called (nothing was sent)."""
        return asyncio.run_coroutine_threadsafe(self._post(url, body, headers, timeout, max_bytes), self._loop)

    async def _post(self, url: str, body: bytes, headers: dict[str, str], timeout: float, max_bytes: int) -> Response:
        started = time.monotonic()
        checked = url_check(url)  # raises UrlNotAllowed
        try:
            async with asyncio.timeout(timeout):
                await self._pin(checked)
                return await self._exchange(url, body, headers, max_bytes, started)
        except TimeoutError:
            return Response(None, _ms(started), f"No answer within {timeout:g} seconds.", timed_out=True)
        except UrlNotAllowed:
            raise
        except aiohttp.ClientConnectorError as exc:
            cause: BaseException = exc
            if isinstance(exc, aiohttp.ClientConnectorCertificateError):
                cause = exc.certificate_error
            elif isinstance(exc, aiohttp.ClientConnectorSSLError) or isinstance(exc.os_error, ConnectionRefusedError):
                cause = exc.os_error
            return Response(None, _ms(started), failure_text(cause))
        except (aiohttp.ClientError, OSError, ssl.SSLError) as exc:
            return Response(None, _ms(started), failure_text(exc))
        except Exception as exc:  # anything else is still one failed request, reported as such
            return Response(None, _ms(started), f"Request error: {exc.__class__.__name__}")

    async def _pin(self, checked: CheckedUrl) -> None:
        """Resolve and check the host once for this sender (a thread does the blocking look-up)."""
        if checked.literal is not None:
            checked.resolve()  # the literal address itself must be allowed
            return
        key = (checked.hostname, checked.port)
        pinned = self._resolver.pins.get(key)
        if pinned is not None and checked.address_allowed(pinned):
            return
        target = await asyncio.get_running_loop().run_in_executor(None, checked.resolve)
        self._resolver.pins[key] = target.address

    async def _exchange(
        self, url: str, body: bytes, headers: dict[str, str], max_bytes: int, started: float
    ) -> Response:
        async with self._session.post(url, data=body, headers=headers, allow_redirects=False) as response:
            chunks: list[bytes] = []
            size = 0
            while max_bytes and size <= max_bytes:
                chunk = await response.content.read(max_bytes + 1 - size)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            content = b"".join(chunks)
            status = response.status
            return Response(
                status,
                _ms(started),
                "" if 200 <= status < 300 else f"HTTP {status}",
                body=content[:max_bytes],
                truncated=len(content) > max_bytes,
                location=response.headers.get("Location"),
            )

    def close(self) -> None:
        """Close the connections and end the thread (after the requests in flight were awaited)."""

        async def shut(session: Any) -> None:
            await session.close()

        try:
            asyncio.run_coroutine_threadsafe(shut(self._session), self._loop).result(10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)

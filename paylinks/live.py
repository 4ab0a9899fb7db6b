"""The pay page's live status: a long poll, `GET /pay/{token}/live?since=<state>`.

The answer comes as soon as the request's state differs from `since` (what the page shows:
`status:draftStatus:confirmations`), or after LIVE_WAIT_SECONDS with the unchanged state;
the body is the checkout status document. pay.js asks again at once, and falls back to its
backed-off polling of the status endpoint when this answers anything but 200 (no ASGI
process, too many waiters, an old proxy). Pages without JavaScript keep their refresh link.

The waiters are a shared pool (MAX_WAITERS per process); each account's pay links hold at
most MAX_WAITERS_PER_ACCOUNT of them, so payers of one merchant (or one merchant's own script
opening its links' polls) cannot take every place and push the others' pages back to polling.

It is served by the ASGI process (mcp_server/asgi.py routes it; nginx sends it there), where
a waiting payer holds a coroutine, not one of the few WSGI workers. On PostgreSQL a waiter
reads the state when it arrives and again only when woken: every change of a pay link's rows
NOTIFYs its token at commit (core/sql/notify.py), and the process's one LISTEN connection (the
`Hub`) wakes the waiters of that token — no waiter polls, so one process holds MAX_WAITERS
(10,000) at the cost of memory alone. If the listener cannot connect, and on other databases,
a waiter reads every LIVE_CHECK_SECONDS instead, and the process takes POLLED_MAX_WAITERS.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import re
import threading
import time
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

from django.db import InterfaceError, OperationalError, connection

from core.sql import notify
from paylinks.models import TOKEN_PATTERN, PaymentRequest, PaymentRequestStatus
from paylinks.presenters import checkout_status_json

LIVE_PATH = re.compile(rf"^/pay/(?P<token>{TOKEN_PATTERN})/live$")
LIVE_WAIT_SECONDS = 25.0  # under every proxy's idle timeout (nginx: 60 s)
LIVE_WAIT_SPREAD = 0.2  # each wait is 20 % shorter or longer at random: pages that arrived together
# (a burst of payers, every page reconnecting after a restart) do not keep asking again together
LIVE_CHECK_SECONDS = 0.25  # polled waiters only (no LISTEN)
MAX_WAITERS = 10_000  # per process, woken by NOTIFY; beyond it the page polls
POLLED_MAX_WAITERS = 500  # per process, when waiters must read on a timer
MAX_WAITERS_PER_ACCOUNT = 2_000  # an account's share of them: four others are always served
LISTENER_CONNECT_SECONDS = 2.0  # a waiter polls when the listener is not up by then
LISTENER_RETRY_SECONDS = 1.0
KNOWN_SECONDS = 900.0  # a state read stays known at most this long without a NOTIFY: every change
# is written, and NOTIFYs; time alone changes only an open link's status at its expiry, and the
# kept state ends then. Each entry ends at a random point of the last half, so the waiters that
# arrived together do not all read again together.
logger = logging.getLogger(__name__)
HEADERS = [
    (b"content-type", b"application/json"),
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
]

_waiters = 0
_account_waiters: dict[int, int] = {}
# The reads run on a few threads of their own, each keeping its database connection
# (CONN_MAX_AGE), so a waiting payer costs no thread and no connection of its own.
READ_THREADS = 8
_reads = ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="pay-live")


def reads_close() -> None:
    """Close the read threads' database connections (each thread takes one of these calls)."""
    together = threading.Barrier(READ_THREADS, timeout=10)

    def close() -> None:
        connection.close()
        together.wait()

    for future in [_reads.submit(close) for _ in range(READ_THREADS)]:
        future.result()


def state_key(document: dict[str, Any]) -> str:
    """What the page shows, as the page writes it (pay.js compares the same string)."""
    return f"{document['status']}:{document['draftStatus'] or ''}:{document['confirmations']}"


Found = tuple[int, dict[str, Any], float]


def _read(token: str) -> Found | None:
    """(the account whose pay link `token` is, the checkout status document as GET
    /api/v1/checkout/{token}/status answers it, the time (epoch seconds) from which time alone
    would change that document: an open link's expiry, else never), in one read; None for an
    unknown token."""
    # The read thread keeps its connection (no health check per read, as a request's would make:
    # a second round trip); a connection that failed is closed and the read made once more.
    try:
        payment_request = PaymentRequest.objects.select_related("draft").filter(token=token).first()
    except (OperationalError, InterfaceError):
        connection.close()
        payment_request = PaymentRequest.objects.select_related("draft").filter(token=token).first()
    if payment_request is None:
        return None
    document = checkout_status_json(payment_request)
    changes_at = payment_request.expires_at.timestamp() if document["status"] == PaymentRequestStatus.OPEN else math.inf
    return payment_request.user_id, document, changes_at


class Hub:
    """The event loop's LISTEN connection and the waiters it wakes, by pay-link token."""

    def __init__(self) -> None:
        self.ready = asyncio.Event()
        self.waiting: dict[str, set[asyncio.Future[None]]] = {}
        # What a read found for a token, until its next NOTIFY (or KNOWN_SECONDS): a payer asking
        # again after an unchanged wait is answered from here, so only changes cost a read.
        self.known: dict[str, tuple[float, Found]] = {}  # token -> (kept until, on the loop's clock; found)
        self.task = asyncio.get_running_loop().create_task(self._listen(), name="pay-live-listener")

    async def _listen(self) -> None:
        while True:
            try:
                await notify.listen(notify.PAY_LIVE_CHANNEL, self.wake, self.ready)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure of the connection: connect again
                logger.warning("Pay page listener lost its database connection (%s); reconnecting", type(exc).__name__)
            # Changes made while it was down were not heard: every waiter reads again.
            self.known.clear()
            for token in list(self.waiting):
                self.wake(token)
            await asyncio.sleep(LISTENER_RETRY_SECONDS)

    def wake(self, token: str) -> None:
        self.known.pop(token, None)
        for woken in self.waiting.get(token, ()):
            if not woken.done():
                woken.set_result(None)

    def remember(self, token: str, found: Found) -> None:
        """Keep what a read of `token` found (taken after its watch: a later change forgets it)."""
        if self.ready.is_set():
            self.known.pop(token, None)
            keep = min(KNOWN_SECONDS * random.uniform(0.5, 1.0), found[2] - time.time())  # noqa: S311 - a spread, not a secret
            self.known[token] = (asyncio.get_running_loop().time() + keep, found)
            while len(self.known) > 2 * MAX_WAITERS:  # the oldest first
                del self.known[next(iter(self.known))]

    def recall(self, token: str) -> Found | None:
        entry = self.known.get(token)
        if entry is None or asyncio.get_running_loop().time() >= entry[0]:
            return None
        return entry[1]

    def watch(self, token: str) -> asyncio.Future[None]:
        woken = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(token, set()).add(woken)
        return woken

    def unwatch(self, token: str, woken: asyncio.Future[None]) -> None:
        watchers = self.waiting.get(token)
        if watchers is not None:
            watchers.discard(woken)
            if not watchers:
                del self.waiting[token]


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = weakref.WeakKeyDictionary()


async def _listening_hub() -> Hub | None:
    """This loop's hub once it listens; None where waiters must poll (no NOTIFY, or no listener yet)."""
    if not notify.available():
        return None
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = Hub()
    try:
        await asyncio.wait_for(hub.ready.wait(), LISTENER_CONNECT_SECONDS)
    except TimeoutError:
        return None
    return hub


async def wait_for_change(token: str, since: str, *, wait: float | None = None) -> dict[str, Any] | None:
    """The status once it differs from `since`, or as it is after `wait` seconds; None for an unknown token."""
    hub = await _listening_hub()
    return await _wait(token, since, wait=wait, hub=hub, woken=None, first=None)


async def _wait(
    token: str,
    since: str,
    *,
    wait: float | None,
    hub: Hub | None,
    woken: asyncio.Future[None] | None,
    first: dict[str, Any] | None,
) -> dict[str, Any] | None:
    """`wait_for_change` with the hub, and a watch taken and a document read after it, if any."""
    loop = asyncio.get_running_loop()
    if wait is None:
        wait = LIVE_WAIT_SECONDS * random.uniform(1 - LIVE_WAIT_SPREAD, 1 + LIVE_WAIT_SPREAD)  # noqa: S311 - a spread
    deadline = loop.time() + wait
    document = first
    while True:
        # Watched before it is read: a change committed after the read wakes this waiter.
        if woken is None and hub is not None:
            woken = hub.watch(token)
        try:
            if document is None:
                found = await loop.run_in_executor(_reads, _read, token)
                document = None if found is None else found[1]
                if found is not None and hub is not None:
                    hub.remember(token, found)
            if document is None or state_key(document) != since or loop.time() >= deadline:
                return document
            if woken is None:
                await asyncio.sleep(min(LIVE_CHECK_SECONDS, max(0.0, deadline - loop.time())))
            else:
                try:
                    await asyncio.wait_for(woken, deadline - loop.time())
                except TimeoutError:
                    return document  # nothing changed: as read, without reading again
            document = None  # woken (or the timer): read again
        finally:
            if hub is not None and woken is not None:
                hub.unwatch(token, woken)
                woken = None


async def _answer(send, status: int, body: dict[str, Any], extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    data = json.dumps(body).encode()
    headers = [*HEADERS, *extra, (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def application(scope: dict[str, Any], receive, send) -> None:
    """ASGI app for LIVE_PATH (the caller routes only those paths here)."""
    global _waiters
    match = LIVE_PATH.match(scope["path"])
    if match is None or scope["method"] != "GET":
        await _answer(send, 404 if match is None else 405, {"title": "Not found", "status": 404})
        return
    since = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("since") or [""])[0][:100]
    busy = {"title": "Busy: poll the status instead", "status": 503}
    if _waiters >= (MAX_WAITERS if notify.available() else POLLED_MAX_WAITERS):
        await _answer(send, 503, busy, [(b"retry-after", b"5")])
        return
    token = match["token"]
    hub = await _listening_hub()
    woken = hub.watch(token) if hub is not None else None  # before the read: no change slips between
    try:
        # On arrival the pay link's account (its share of the waiters) and its state: as last
        # read if no change was heard since, else one read.
        found = hub.recall(token) if hub is not None else None
        if found is None:
            found = await asyncio.get_running_loop().run_in_executor(_reads, _read, token)
            if found is not None and hub is not None:
                hub.remember(token, found)
        if found is None:
            await _answer(send, 404, {"title": "Not found", "status": 404})
            return
        owner, read, _ = found
        document: dict[str, Any] | None = read
        if state_key(read) == since:
            if _account_waiters.get(owner, 0) >= MAX_WAITERS_PER_ACCOUNT:
                await _answer(send, 503, busy, [(b"retry-after", b"5")])
                return
            _waiters += 1
            _account_waiters[owner] = _account_waiters.get(owner, 0) + 1
            try:
                document = await _wait(token, since, wait=None, hub=hub, woken=woken, first=read)
                woken = None  # _wait let it go
            finally:
                _waiters -= 1
                _account_waiters[owner] -= 1
                if not _account_waiters[owner]:
                    del _account_waiters[owner]
    finally:
        if hub is not None and woken is not None:
            hub.unwatch(token, woken)
    if document is None:
        await _answer(send, 404, {"title": "Not found", "status": 404})
        return
    await _answer(send, 200, document)

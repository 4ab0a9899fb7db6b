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
a waiting payer holds a coroutine, not one of the few WSGI workers. While waiting it reads
the request's state every LIVE_CHECK_SECONDS: one indexed read of a few columns.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

from django.db import close_old_connections, connection

from paylinks.models import TOKEN_PATTERN, PaymentRequest
from paylinks.presenters import checkout_status_json

LIVE_PATH = re.compile(rf"^/pay/(?P<token>{TOKEN_PATTERN})/live$")
LIVE_WAIT_SECONDS = 25.0  # under every proxy's idle timeout (nginx: 60 s)
LIVE_CHECK_SECONDS = 0.25
MAX_WAITERS = 500  # per process; beyond it the page polls
MAX_WAITERS_PER_ACCOUNT = 100  # an account's share of them: four others are always served
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
READ_THREADS = 4
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


def _owner(token: str) -> int | None:
    """The account whose pay link `token` is (None for an unknown token)."""
    close_old_connections()
    return PaymentRequest.objects.filter(token=token).values_list("user_id", flat=True).first()


def _status(token: str) -> dict[str, Any] | None:
    """The checkout status document (as GET /api/v1/checkout/{token}/status answers it)."""
    close_old_connections()
    payment_request = PaymentRequest.objects.select_related("draft").filter(token=token).first()
    if payment_request is None:
        return None
    return checkout_status_json(payment_request)


async def wait_for_change(token: str, since: str, *, wait: float | None = None) -> dict[str, Any] | None:
    """The status once it differs from `since`, or as it is after `wait` seconds; None for an unknown token."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + (LIVE_WAIT_SECONDS if wait is None else wait)
    while True:
        document = await loop.run_in_executor(_reads, _status, token)
        if document is None or state_key(document) != since or loop.time() >= deadline:
            return document
        await asyncio.sleep(LIVE_CHECK_SECONDS)


async def _answer(send, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] = ()) -> None:
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
    if _waiters >= MAX_WAITERS:
        await _answer(send, 503, busy, [(b"retry-after", b"5")])
        return
    owner = await asyncio.get_running_loop().run_in_executor(_reads, _owner, match["token"])
    if owner is None:
        await _answer(send, 404, {"title": "Not found", "status": 404})
        return
    if _account_waiters.get(owner, 0) >= MAX_WAITERS_PER_ACCOUNT:
        await _answer(send, 503, busy, [(b"retry-after", b"5")])
        return
    _waiters += 1
    _account_waiters[owner] = _account_waiters.get(owner, 0) + 1
    try:
        document = await wait_for_change(match["token"], since)
    finally:
        _waiters -= 1
        _account_waiters[owner] -= 1
        if not _account_waiters[owner]:
            del _account_waiters[owner]
    if document is None:
        await _answer(send, 404, {"title": "Not found", "status": 404})
        return
    await _answer(send, 200, document)

"""The pay page's long poll is woken by PostgreSQL, not by reading on a timer: a pay link's
change NOTIFYs its token at commit (core/sql/notify.py, the triggers of paylinks' migration
0006), the ASGI process's one LISTEN connection wakes that token's waiters, and a waiter reads
the state when it arrives and when woken, never in between. Without a listener it polls."""

from __future__ import annotations

import asyncio
import threading

import httpx
import psycopg
import pytest
from django.db import connection, transaction

from core.sql import notify
from drafts.models import Draft
from paylinks import live
from paylinks.models import PaymentRequest
from tests.paylinks.conftest import pay
from tests.paylinks.test_pay_page_live import _reads_closed, chosen  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db(transaction=True)


def listening() -> psycopg.Connection:
    conn = psycopg.connect(**notify._listen_params(), autocommit=True)
    conn.execute(f"LISTEN {notify.PAY_LIVE_CHANNEL}")
    return conn


def heard(conn: psycopg.Connection, seconds: float = 2.0) -> list[str]:
    return [n.payload for n in conn.notifies(timeout=seconds, stop_after=10)]


@pytest.mark.slow
def test_a_committed_change_of_a_pay_links_draft_or_request_notifies_its_token_and_a_rolled_back_one_does_not(chosen):  # noqa: F811 - the fixture imported above
    conn = listening()
    try:
        with pytest.raises(RuntimeError), transaction.atomic():
            Draft.objects.filter(pk=chosen["draft_id"]).update(confirmations=5)
            raise RuntimeError("rolled back")
        assert heard(conn, 0.5) == []

        Draft.objects.filter(pk=chosen["draft_id"]).update(confirmations=1)
        assert heard(conn) == [chosen["token"]]

        PaymentRequest.objects.filter(token=chosen["token"]).update(payer_language="de")
        assert heard(conn) == [chosen["token"]]

        Draft.objects.exclude(pk=chosen["draft_id"]).filter(payment_request_id__isnull=True).update(confirmations=2)
        assert heard(conn, 0.5) == []  # drafts of no pay link wake nobody
    finally:
        conn.close()


def waiting(
    token: str, since: str, *, wait: float, change_after: float | None, draft_id: str
) -> tuple[dict, float, int]:
    """One long poll through the ASGI app: (its answer, seconds it took, status reads made)."""
    from mcp_server.asgi import application

    reads = {"count": 0}
    real_read = live._read

    def counted(token: str) -> tuple[int, dict] | None:  # counts the reads; each is the real one
        reads["count"] += 1
        return real_read(token)

    def change() -> None:
        try:
            pay(draft_id, confirmations=1)
        finally:
            connection.close()

    async def get() -> tuple[dict, float]:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as client:
            started = asyncio.get_running_loop().time()
            response = await client.get(f"/pay/{token}/live?since={since}")
            return response.json(), asyncio.get_running_loop().time() - started

    live._read = counted
    try:
        if change_after is not None:
            threading.Timer(change_after, change).start()
        original_wait = live.LIVE_WAIT_SECONDS
        live.LIVE_WAIT_SECONDS = wait
        try:
            body, took = asyncio.run(get())
        finally:
            live.LIVE_WAIT_SECONDS = original_wait
    finally:
        live._read = real_read
    return body, took, reads["count"]


@pytest.mark.slow
def test_a_waiter_reads_once_when_nothing_changes_and_once_more_when_woken(chosen):  # noqa: F811 - the fixture imported above
    token, draft_id = chosen["token"], chosen["draft_id"]
    body, took, reads = waiting(token, "Open:Pending:0", wait=2.0, change_after=None, draft_id=draft_id)
    assert live.state_key(body) == "Open:Pending:0" and took >= 2.0 * (1 - live.LIVE_WAIT_SPREAD)
    assert reads == 1  # polling every LIVE_CHECK_SECONDS would have read 8 times

    body, took, reads = waiting(token, "Open:Pending:0", wait=20.0, change_after=1.0, draft_id=draft_id)
    assert live.state_key(body) == "Open:Seen:1"
    assert 1.0 <= took < 3.0 and reads == 2  # the arrival's read, and the one the NOTIFY woke


@pytest.mark.slow
def test_without_a_listener_a_waiter_polls_and_still_hears_of_the_payment(chosen, settings):  # noqa: F811 - the fixture imported above
    settings.LIVE_LISTEN_DATABASE_URL = "postgresql://postgres@127.0.0.1:1/nowhere"  # nothing listens there

    token, draft_id = chosen["token"], chosen["draft_id"]
    body, took, reads = waiting(token, "Open:Pending:0", wait=20.0, change_after=3.0, draft_id=draft_id)

    assert live.state_key(body) == "Open:Seen:1"
    assert 3.0 <= took < 6.0 and reads >= 2  # read on the timer after the listener's 2 s


def test_a_payer_asking_again_after_an_unchanged_wait_costs_no_read_until_a_change_is_heard(chosen):  # noqa: F811
    token, draft_id = chosen["token"], chosen["draft_id"]
    from mcp_server.asgi import application

    reads = {"count": 0}
    real_read = live._read

    def counted(token: str) -> tuple[int, dict] | None:  # counts the reads; each is the real one
        reads["count"] += 1
        return real_read(token)

    async def ask(client: httpx.AsyncClient) -> dict:
        return (await client.get(f"/pay/{token}/live?since=Open:Pending:0")).json()

    async def scene() -> list[tuple[str, int]]:
        seen = []
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as client:
            for _ in range(3):  # the page asks again each time the wait ends unchanged
                seen.append((live.state_key(await ask(client)), reads["count"]))
            await asyncio.to_thread(pay_and_close, draft_id)
            seen.append((live.state_key(await ask(client)), reads["count"]))
        return seen

    live._read, original_wait = counted, live.LIVE_WAIT_SECONDS
    live.LIVE_WAIT_SECONDS = 0.5
    try:
        seen = asyncio.run(scene())
    finally:
        live._read, live.LIVE_WAIT_SECONDS = real_read, original_wait

    assert seen == [("Open:Pending:0", 1), ("Open:Pending:0", 1), ("Open:Pending:0", 1), ("Open:Seen:1", 2)]


def pay_and_close(draft_id: str) -> None:
    try:
        pay(draft_id, confirmations=1)
    finally:
        connection.close()


@pytest.mark.slow
def test_an_open_links_kept_state_ends_at_its_expiry_though_nothing_is_written(chosen):  # noqa: F811
    """Time alone changes an open link (Expired at its expiry, before the beat task writes it):
    the state kept between NOTIFYs ends then, so the waiting page hears it at once."""
    from datetime import timedelta

    from django.utils import timezone

    from mcp_server.asgi import application

    token = chosen["token"]
    expiry = timezone.now() + timedelta(seconds=2)
    PaymentRequest.objects.filter(token=token).update(expires_at=expiry)

    async def scene() -> list[str]:
        seen: list[str] = []
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as client:
            while not seen or seen[-1].startswith("Open:"):
                answer = await client.get(f"/pay/{token}/live?since=Open:Pending:0")
                seen.append(live.state_key(answer.json()))
                assert timezone.now() < expiry + timedelta(seconds=3), seen
        return seen

    original_wait = live.LIVE_WAIT_SECONDS
    live.LIVE_WAIT_SECONDS = 0.5
    try:
        seen = asyncio.run(scene())
    finally:
        live.LIVE_WAIT_SECONDS = original_wait

    assert seen[-1] == "Expired:Pending:0"
    assert timezone.now() >= expiry


@pytest.mark.slow
def test_pages_that_arrived_together_do_not_ask_again_together(chosen):  # noqa: F811
    """Each wait ends at its own point of LIVE_WAIT_SECONDS +- LIVE_WAIT_SPREAD, so a burst of
    payers (or every page reconnecting after a restart) spreads out instead of asking again as one."""
    from mcp_server.asgi import application

    token = chosen["token"]

    async def scene() -> list[float]:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as client:
            loop = asyncio.get_running_loop()
            started = loop.time()

            async def one() -> float:
                answer = await client.get(f"/pay/{token}/live?since=Open:Pending:0")
                assert live.state_key(answer.json()) == "Open:Pending:0"
                return loop.time() - started

            return await asyncio.gather(*(one() for _ in range(20)))

    original_wait = live.LIVE_WAIT_SECONDS
    live.LIVE_WAIT_SECONDS = 2.0
    try:
        ended = sorted(asyncio.run(scene()))
    finally:
        live.LIVE_WAIT_SECONDS = original_wait

    assert 2.0 * (1 - live.LIVE_WAIT_SPREAD) <= ended[0] and ended[-1] < 2.0 * (1 + live.LIVE_WAIT_SPREAD) + 1.0
    assert ended[-1] - ended[0] > 0.3, ended  # twenty waits that ended within a moment of each other

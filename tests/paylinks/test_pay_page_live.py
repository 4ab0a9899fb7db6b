"""The pay page's long poll (paylinks/live.py): it answers the moment a payment is seen or
confirmed, through the ASGI process's routing, and the page tells pay.js where it is."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest
from django.db import connection
from rest_framework.test import APIClient

from paylinks import live
from tests.paylinks.conftest import link_body, pay

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _reads_closed():
    yield
    live.reads_close()  # the database is dropped after the last test


@pytest.fixture
def chosen(create_link, select) -> dict:
    """A pay link whose payer picked USDC on Ethereum: its Pending draft waits for payment."""
    link = create_link()
    response = select(link["token"])
    assert response.status_code == 200, response.json()
    return {"token": link["token"], "draft_id": response.json()["draftId"]}


def asgi_get(path: str) -> httpx.Response:
    """A GET through the ASGI application uvicorn serves (the proxy sends /pay/{token}/live there)."""
    from mcp_server.asgi import application

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.get(path)

    return asyncio.run(get())


def test_the_long_poll_answers_the_moment_the_payment_is_seen(chosen):
    def pay_in_a_while() -> None:  # the watcher's process, elsewhere
        try:
            pay(chosen["draft_id"], confirmations=1)
        finally:
            connection.close()

    from mcp_server import asgi  # noqa: F401 - imported before the clock starts

    threading.Timer(0.5, pay_in_a_while).start()
    started = time.monotonic()

    response = asgi_get(f"/pay/{chosen['token']}/live?since=Open:Pending:0")

    elapsed = time.monotonic() - started
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["draftStatus"], body["confirmations"]) == ("Open", "Seen", 1)
    assert 0.5 <= elapsed < 1.5, elapsed  # woke by the change, not by the 25 s wait
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_a_page_already_behind_gets_the_current_state_at_once(chosen):
    pay(chosen["draft_id"], confirmations=12)
    started = time.monotonic()

    response = asgi_get(f"/pay/{chosen['token']}/live?since=Open:Pending:0")

    assert time.monotonic() - started < 1
    assert response.json()["status"] == "Paid" and response.json()["draftStatus"] == "Confirmed"


def test_nothing_new_answers_the_same_state_after_the_wait(chosen, monkeypatch):
    monkeypatch.setattr(live, "LIVE_WAIT_SECONDS", 0.6)
    started = time.monotonic()

    response = asgi_get(f"/pay/{chosen['token']}/live?since=Open:Pending:0")

    assert 0.6 * (1 - live.LIVE_WAIT_SPREAD) <= time.monotonic() - started < 5
    assert live.state_key(response.json()) == "Open:Pending:0"


def test_an_unknown_token_is_a_404_and_too_many_waiters_a_503_the_page_polls_after(chosen, monkeypatch):
    assert asgi_get("/pay/" + "x" * 30 + "/live").status_code == 404
    monkeypatch.setattr(live, "_waiters", live.MAX_WAITERS)  # on PostgreSQL: the woken waiters' limit
    busy = asgi_get(f"/pay/{chosen['token']}/live?since=Open:Pending:0")
    assert busy.status_code == 503 and busy.headers["retry-after"] == "5"


def test_the_page_tells_its_script_where_to_wait_and_what_it_shows(chosen, client):
    html = client.get(f"/pay/{chosen['token']}").content.decode()

    assert f'data-live-url="/pay/{chosen["token"]}/live"' in html
    assert 'data-live-state="Open:Pending:0"' in html
    assert 'data-poll="on"' in html  # polling stays, for when the long poll is not served


def test_one_account_holds_at_most_its_share_of_the_waiters_and_another_accounts_payers_still_wait(
    chosen, other_account, make_key, select, monkeypatch
):
    monkeypatch.setattr(live, "MAX_WAITERS_PER_ACCOUNT", 3)
    monkeypatch.setattr(live, "LIVE_WAIT_SECONDS", 2.0)
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(user=other_account)}")
    others_link = other.post("/api/v1/payment-requests", link_body(), format="json").json()["token"]
    assert select(others_link).status_code == 200
    waiting = "?since=Open:Pending:0"

    async def scene() -> tuple[list[int], int, int]:
        from mcp_server.asgi import application

        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as client:
            # Account A's payers hold its three places...
            held = [asyncio.create_task(client.get(f"/pay/{chosen['token']}/live{waiting}")) for _ in range(3)]
            while sum(live._account_waiters.values()) < 3:
                await asyncio.sleep(0.01)
            # ...a fourth of A's is sent to polling, while B's payer waits as usual.
            fourth = await client.get(f"/pay/{chosen['token']}/live{waiting}")
            started = asyncio.get_running_loop().time()
            b = await client.get(f"/pay/{others_link}/live{waiting}")
            waited = asyncio.get_running_loop().time() - started
            return [r.status_code for r in await asyncio.gather(*held)], fourth.status_code, (b.status_code, waited)

    held, fourth, (b_status, b_waited) = asyncio.run(scene())

    assert held == [200, 200, 200]
    assert fourth == 503
    assert b_status == 200 and b_waited >= 2.0 * (1 - live.LIVE_WAIT_SPREAD) - 0.1  # a real wait, not a refusal
    assert live._account_waiters == {}  # every place given back

# ruff: noqa: F811 - the fixtures imported below are the arguments of the tests
"""Payments that cannot be confused, on the real Bitcoin regtest node (bcoin, as
tests/scenarios/test_bcoin_wallet_scenarios.py runs it) at one shared address, as issue #43
found them: a repeated payment of a paid draft never pays the next draft near that price, a
near amount is reported and never guessed onto another draft, and a short payment is completed
by exactly the rest."""

from __future__ import annotations

import pytest
from embit.networks import NETWORKS
from embit.script import p2wpkh

from tests.scenarios.conftest import events_of, payload, two_payers_at
from tests.scenarios.test_bcoin_wallet_scenarios import (  # noqa: F401 - the node and the watcher's settings
    ROOT_KEY,
    _watched,
    drafted,
    node,
    tick,
    unmatched,
)

pytestmark = pytest.mark.django_db

_accounts = iter(range(200, 300))


def shared_address() -> str:
    """An address of the merchant's own wallet (not registered here): every draft bills it."""
    key = ROOT_KEY.derive(f"m/84h/1h/{next(_accounts)}h/0/0")
    return p2wpkh(key.key).address(NETWORKS["regtest"])


def draft(api_client, address: str, amount: int) -> dict:
    body = {"network": "Regtest", "receiverAddress": address, "amountSats": amount, "singleOutput": True}
    body["requiredConfirmations"] = 1
    response = api_client.post("/api/v1/drafts", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def test_a_repeated_payment_of_a_paid_draft_never_pays_the_next_draft_near_its_price(api_client, node):
    tick()
    shop = shared_address()
    first = draft(api_client, shop, 100_000)
    paid = node.pay((shop, 100_000))
    node.mine(2)
    tick()
    assert drafted(api_client, first)["status"] == "Confirmed"
    following = draft(api_client, shop, 101_000)  # the next customer, 1% above, the same address

    again = node.pay((shop, 100_000))  # the first customer's wallet pays again
    node.in_mempool(again)
    tick()
    node.mine(2)
    tick()
    assert drafted(api_client, following)["status"] == "Pending"
    assert drafted(api_client, first)["paidTxIds"] == [paid]
    assert events_of(following) == ["draft.created"]
    assert events_of(first) == ["draft.created", "draft.seen", "draft.confirmed", "draft.paid_again"]
    assert payload(first, "draft.paid_again")["again"]["txId"] == again
    report = unmatched(api_client)[again]
    assert first["id"] in report["candidateDraftIds"] and report["matched"] is False


def test_a_near_amount_is_reported_and_never_turns_another_draft_amount_mismatch(api_client, node):
    tick()
    shop = shared_address()
    first = draft(api_client, shop, 100_000)
    node.pay((shop, 100_000))
    node.mine(2)
    tick()
    following = draft(api_client, shop, 101_000)
    near = node.pay((shop, 97_000))  # within 10% of both: the first payer's, or the second's?
    node.mine(2)
    tick()

    body = drafted(api_client, following)
    assert body["status"] == "Pending" and body.get("amountMismatch") is None
    assert events_of(following) == ["draft.created"]
    report = unmatched(api_client)[near]
    assert {first["id"], following["id"]} <= set(report["candidateDraftIds"])
    assert report["amountSats"] == 97_000
    assert "draft.paid_again" not in events_of(first)  # not its exact amount


def test_a_short_payment_is_completed_by_exactly_the_rest(api_client, node):
    tick()
    shop = shared_address()
    made = draft(api_client, shop, 100_000)
    short = node.pay((shop, 96_000))
    node.mine(2)
    tick()
    body = drafted(api_client, made)
    assert body["status"] == "AmountMismatch" and body["amountMismatch"]["differenceBaseUnits"] == -4_000

    rest = node.pay((shop, 4_000))
    node.mine(2)
    tick()
    body = drafted(api_client, made)
    assert body["status"] == "Confirmed" and sorted(body["paidTxIds"]) == sorted([short, rest])
    assert body["receivedAmountSats"] == 100_000
    assert events_of(made) == ["draft.created", "draft.amount_mismatch", "draft.seen", "draft.confirmed"]
    assert short not in unmatched(api_client) and rest not in unmatched(api_client)


def test_a_payers_checkout_shows_only_their_own_payment_never_another_transfer_to_the_address(
    api_client, session_client, node
):
    """Two payers of one shop's pay links at one address: one pays, a stranger sends 3% less than
    either price (a payment nobody can tell whose) and another far off. Each payer's status API
    and page show only the transfer attached to their own draft; the other two are the
    merchant's, in the unmatched-transfers API and the dashboard."""
    tick()
    shop = shared_address()
    payer, tokens, drafts = two_payers_at(
        api_client, currency="BTC", network="Regtest", receiver=shop, orders=("B-1", "B-2")
    )
    assert drafts[0]["receiverAddress"] == drafts[1]["receiverAddress"] == shop
    near = drafts[1]["amountSats"] * 97 // 100  # within 10% of both drafts: not guessed
    strangers = [node.pay((shop, near)), node.pay((shop, 777_777))]
    mine = node.pay((shop, drafts[0]["amountSats"]))
    node.mine(2)
    tick()

    first = payer.get(f"/api/v1/checkout/{tokens[0]}/status").json()
    second = payer.get(f"/api/v1/checkout/{tokens[1]}/status").json()
    assert first["draftStatus"] == "Confirmed" and first["paidTxId"] == mine
    assert second["draftStatus"] == "Pending" and second["paidTxId"] is None
    for token, shown in ((tokens[0], first), (tokens[1], second)):
        page = payer.get(f"/pay/{token}").content.decode()
        assert not any(txid in page or txid in str(shown) for txid in strangers)
        assert "0.00777777" not in page and f"{near / 10**8:.8f}" not in page
    page = payer.get(f"/pay/{tokens[1]}").content.decode()
    assert mine not in page and "We received" not in page
    assert set(unmatched(api_client)) == set(strangers)  # the merchant's business
    dashboard = session_client.get("/dashboard/transfers/").content.decode()
    assert all(txid in dashboard for txid in strangers)

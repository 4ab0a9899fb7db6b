"""Payments that cannot be confused, on Solana's local server (tests/chainwatch/fakes.py, as
tests/scenarios/test_bitcoin_solana_scenarios.py runs it): a short payment is completed by
exactly the rest under the draft's reference, and two drafts of one price at one receiver are
each paid by their own reference, a repeated payment of one never paying the other."""

from __future__ import annotations

import pytest

from payments.registry import get_asset
from tests.scenarios.conftest import events_of, payload, two_payers_at
from tests.scenarios.test_bitcoin_solana_scenarios import (  # noqa: F401 - the operator's settings
    SOL_RECEIVER,
    _operator,
    sol_draft,
    sol_pay,
    status_of,
    tick,
    unmatched,
)

pytestmark = pytest.mark.django_db

USDC_MINT = get_asset("USDC", "Solana").token_address
STRANGER = "Stranger1111111111111111111111111111111111111"  # another shop's reference, or a wallet's own


def test_solana_a_short_payment_is_completed_by_exactly_the_rest_under_its_reference(api_client, solana):
    draft, reference = sol_draft(api_client, "USDC", 25_000_000)
    short = sol_pay(solana, reference, "USDC", 24_000_000)
    solana.finalize(short)
    tick("Solana", "solana")
    body = api_client.get(f"/api/v1/drafts/{draft['id']}").json()
    assert body["status"] == "AmountMismatch" and body["amountMismatch"]["differenceBaseUnits"] == -1_000_000

    rest = sol_pay(solana, reference, "USDC", 1_000_000)
    solana.finalize(rest)
    tick("Solana", "solana")
    status = status_of(api_client, draft)
    assert status["status"] == "Confirmed" and sorted(status["txIds"]) == sorted([short, rest])
    assert events_of(draft) == ["draft.created", "draft.amount_mismatch", "draft.seen", "draft.confirmed"]
    assert payload(draft, "draft.confirmed")["receivedAmountSats"] == 25_000_000
    assert unmatched(api_client) == []


def test_solana_a_repeated_payment_of_a_paid_draft_never_pays_the_next_draft_of_that_price(api_client, solana):
    first, first_reference = sol_draft(api_client, "SOL", 1_500_000_000)
    paid = sol_pay(solana, first_reference, "SOL", 1_500_000_000)
    solana.finalize(paid)
    tick("Solana", "solana")
    following, _ = sol_draft(api_client, "SOL", 1_500_000_001)  # the same receiver, a price next to it
    again = sol_pay(solana, first_reference, "SOL", 1_500_000_000)  # the first payer's wallet, again
    solana.finalize(again)
    tick("Solana", "solana")

    assert status_of(api_client, following)["status"] == "Pending"
    assert events_of(following) == ["draft.created"]
    assert status_of(api_client, first)["txIds"] == [paid]
    assert events_of(first) == ["draft.created", "draft.seen", "draft.confirmed", "draft.paid_again"]
    (item,) = unmatched(api_client)
    assert item["txId"] == again and first["id"] in item["candidateDraftIds"]


def test_solana_a_payers_checkout_shows_only_their_own_payment_never_another_transfer_to_the_receiver(
    api_client, session_client, solana
):
    """Two payers of one shop's pay links at one receiver: the first pays under their draft's
    reference, and their wallet pays again; the second draft's reference gets a far-off amount;
    a stranger sends the second draft's exact amount under a reference of their own. Each payer's
    status API and page show only the transfer attached to their own draft; the reported ones are
    the merchant's (unmatched-transfers API, dashboard); the stranger's carries no reference of
    ours, so it pays nothing and is nobody's business here (chainwatch.solana)."""
    payer, tokens, drafts = two_payers_at(
        api_client, currency="USDC", network="Solana", receiver=SOL_RECEIVER, orders=("S-1", "S-2")
    )
    first_reference, second_reference = (d["solanaReference"] for d in drafts)
    mine = sol_pay(solana, first_reference, "USDC", drafts[0]["amountSats"])
    solana.finalize(mine)
    tick("Solana", "solana")
    reported = [
        sol_pay(solana, first_reference, "USDC", drafts[0]["amountSats"]),  # the first payer's wallet, again
        sol_pay(solana, second_reference, "USDC", 77_777_777),  # far off the second draft's price
    ]
    stranger = solana.pay_token(
        reference=STRANGER, receiver=SOL_RECEIVER, mint=USDC_MINT, amount=drafts[1]["amountSats"]
    )
    for signature in (*reported, stranger):
        solana.finalize(signature)
    tick("Solana", "solana")

    first = payer.get(f"/api/v1/checkout/{tokens[0]}/status").json()
    second = payer.get(f"/api/v1/checkout/{tokens[1]}/status").json()
    assert first["draftStatus"] == "Confirmed" and first["paidTxId"] == mine
    assert second["draftStatus"] == "Pending" and second["paidTxId"] is None  # its amount, not its reference
    for token, shown in ((tokens[0], first), (tokens[1], second)):
        page = payer.get(f"/pay/{token}").content.decode()
        assert not any(signature in page or signature in str(shown) for signature in (*reported, stranger))
        assert "77.777777" not in page
    page = payer.get(f"/pay/{tokens[1]}").content.decode()
    assert mine not in page and "We received" not in page
    assert sorted(item["txId"] for item in unmatched(api_client)) == sorted(reported)  # the merchant's business
    dashboard = session_client.get("/dashboard/transfers/").content.decode()
    assert all(signature in dashboard for signature in reported)

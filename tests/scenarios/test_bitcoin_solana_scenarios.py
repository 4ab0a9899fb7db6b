"""The payment scenarios where Bitcoin (Core JSON-RPC and Esplora REST, both run) and Solana
have the case, against local servers answering as those APIs document (tests/chainwatch/fakes.py):
exact, short, split, paid twice, and a reorg (Bitcoin) or roll-back before finality (Solana).
Drafts are made through the API; the watcher runs through its beat task."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from chainwatch.models import Cursor
from chainwatch.tasks import chainwatch_run
from fees.models import AccruedFee
from payments.registry import get_asset
from tests.scenarios.conftest import events_of, payload, unmatched_events

pytestmark = pytest.mark.django_db

BTC_RECEIVER = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
BTC_FEE_ADDRESS = "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3"
SOL_RECEIVER = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"


@pytest.fixture(autouse=True)
def _operator(settings):
    settings.PLATFORM_FEE_ADDRESSES = {"Mainnet": BTC_FEE_ADDRESS}
    settings.API_RATE_LIMITS = {"read": "100000/min", "write": "100000/min"}


def create(api_client, **body) -> dict:
    response = api_client.post("/api/v1/drafts", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def status_of(api_client, draft: dict) -> dict:
    return api_client.get(f"/api/v1/drafts/{draft['id']}/status").json()


def unmatched(api_client) -> list[dict]:
    return api_client.get("/api/v1/transfers?matched=false").json()["items"]


def tick(network: str, family: str) -> None:
    chainwatch_run(network, family)
    cursor = Cursor.objects.get(network=network, family=family)
    assert cursor.last_error == "", cursor.last_error


# --- Bitcoin ------------------------------------------------------------------------------


def btc_draft(api_client, amount: int, **body) -> dict:
    return create(
        api_client, network="Mainnet", currency="BTC", receiverAddress=BTC_RECEIVER, amountSats=amount, **body
    )


def test_bitcoin_an_exact_multi_output_payment_is_seen_from_the_mempool_and_confirmed_once(api_client, bitcoin):
    tick("Mainnet", "bitcoin")
    draft = btc_draft(api_client, 250_000)
    assert draft["paymentMethod"] == "MultiOutput"
    txid = bitcoin.pay((BTC_RECEIVER, 250_000), (BTC_FEE_ADDRESS, draft["platformFeeSats"]))
    tick("Mainnet", "bitcoin")
    assert status_of(api_client, draft)["status"] == "Seen"
    bitcoin.mine(1)
    tick("Mainnet", "bitcoin")
    bitcoin.mine(1)
    tick("Mainnet", "bitcoin")
    bitcoin.mine(3)
    tick("Mainnet", "bitcoin")  # more blocks change nothing

    status = status_of(api_client, draft)
    assert status["status"] == "Confirmed" and status["txIds"] == [txid]
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed"]
    confirmed = payload(draft, "draft.confirmed")
    assert confirmed["txId"] == txid and confirmed["amountSats"] == 250_000 and confirmed["confirmations"] == 2
    assert confirmed["platformFee"]["accrued"] is False  # paid as an output of the transaction
    assert not AccruedFee.objects.exists() and unmatched(api_client) == []


def test_bitcoin_a_short_payment_within_ten_percent_waits_for_accept_received(api_client, bitcoin):
    tick("Mainnet", "bitcoin")
    draft = btc_draft(api_client, 250_000, singleOutput=True)
    bitcoin.pay((BTC_RECEIVER, 240_000))  # 4% short
    bitcoin.mine(1)
    tick("Mainnet", "bitcoin")
    assert status_of(api_client, draft)["status"] == "AmountMismatch"
    assert api_client.post(f"/api/v1/drafts/{draft['id']}/accept-received").json()["status"] == "Seen"
    bitcoin.mine(1)
    tick("Mainnet", "bitcoin")

    assert status_of(api_client, draft)["status"] == "Confirmed"
    assert events_of(draft) == ["draft.created", "draft.amount_mismatch", "draft.seen", "draft.confirmed"]
    assert payload(draft, "draft.confirmed")["receivedAmountSats"] == 240_000
    assert AccruedFee.objects.filter(draft_id=draft["id"]).count() == 1


def test_bitcoin_a_payment_twenty_percent_short_is_reported_unmatched_once(api_client, bitcoin):
    tick("Mainnet", "bitcoin")
    draft = btc_draft(api_client, 250_000, singleOutput=True)
    txid = bitcoin.pay((BTC_RECEIVER, 200_000))
    bitcoin.mine(2)
    tick("Mainnet", "bitcoin")
    bitcoin.mine(1)
    tick("Mainnet", "bitcoin")

    assert status_of(api_client, draft)["status"] == "Pending"
    (item,) = unmatched(api_client)
    assert item["txId"] == txid and item["outputIndex"] == 0 and item["amountSats"] == 200_000
    assert item["candidateDraftIds"] == [draft["id"]]
    assert [e["txId"] for e in unmatched_events()] == [txid]
    assert events_of(draft) == ["draft.created"]


def test_bitcoin_a_payment_split_sixty_forty_pays_the_draft_with_both_transactions(api_client, bitcoin):
    tick("Mainnet", "bitcoin")
    draft = btc_draft(api_client, 250_000, singleOutput=True)
    first = bitcoin.pay((BTC_RECEIVER, 150_000))
    tick("Mainnet", "bitcoin")
    second = bitcoin.pay((BTC_RECEIVER, 100_000))
    tick("Mainnet", "bitcoin")
    assert status_of(api_client, draft)["status"] == "Seen"
    bitcoin.mine(2)
    tick("Mainnet", "bitcoin")

    status = status_of(api_client, draft)
    assert status["status"] == "Confirmed" and status["txIds"] == [first, second]
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed"]
    confirmed = payload(draft, "draft.confirmed")
    assert confirmed["txIds"] == [first, second] and confirmed["receivedAmountSats"] == 250_000
    assert unmatched(api_client) == [] and AccruedFee.objects.filter(draft_id=draft["id"]).count() == 1


def test_bitcoin_a_draft_paid_twice_reports_the_second_payment(api_client, bitcoin):
    tick("Mainnet", "bitcoin")
    draft = btc_draft(api_client, 250_000, singleOutput=True)
    first = bitcoin.pay((BTC_RECEIVER, 250_000))
    bitcoin.mine(2)
    tick("Mainnet", "bitcoin")
    assert status_of(api_client, draft)["status"] == "Confirmed"
    second = bitcoin.pay((BTC_RECEIVER, 250_000))  # sent again after the first confirmed
    bitcoin.mine(2)
    tick("Mainnet", "bitcoin")

    assert status_of(api_client, draft)["txIds"] == [first]
    (item,) = unmatched(api_client)
    assert item["txId"] == second and item["candidateDraftIds"] == [draft["id"]]
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed", "draft.paid_again"]


def test_bitcoin_a_reorg_before_confirmation_sends_the_draft_back_to_pending_then_seen_again(api_client, bitcoin):
    tick("Mainnet", "bitcoin")
    draft = btc_draft(api_client, 250_000, singleOutput=True)
    txid = bitcoin.pay((BTC_RECEIVER, 250_000))
    bitcoin.mine(1)
    tick("Mainnet", "bitcoin")
    assert status_of(api_client, draft)["status"] == "Seen"

    bitcoin.reorg(1)  # the block with the payment is replaced by a longer branch without it
    tick("Mainnet", "bitcoin")
    status = status_of(api_client, draft)
    assert status["status"] == "Pending" and status["txId"] is None and status["confirmations"] == 0
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.payment_reverted"]

    bitcoin.mempool[txid] = bitcoin.find_dropped(txid)  # rebroadcast, then mined on the new branch
    bitcoin.mine(2)
    tick("Mainnet", "bitcoin")
    assert status_of(api_client, draft)["status"] == "Confirmed"
    assert events_of(draft) == [
        "draft.created",
        "draft.seen",
        "draft.payment_reverted",
        "draft.seen",
        "draft.confirmed",
    ]
    assert payload(draft, "draft.confirmed")["txId"] == txid
    assert unmatched(api_client) == []


# --- Solana -------------------------------------------------------------------------------


def sol_draft(api_client, currency: str, amount: int) -> tuple[dict, str]:
    draft = create(api_client, network="Solana", currency=currency, receiverAddress=SOL_RECEIVER, amountSats=amount)
    (reference,) = parse_qs(urlsplit(draft["paymentUri"]).query)["reference"]
    return draft, reference


def sol_pay(solana, reference: str, currency: str, amount: int) -> str:
    if currency == "SOL":
        return solana.pay_sol(reference=reference, receiver=SOL_RECEIVER, lamports=amount)
    mint = get_asset("USDC", "Solana").token_address
    return solana.pay_token(reference=reference, receiver=SOL_RECEIVER, mint=mint, amount=amount)


@pytest.mark.parametrize(("currency", "amount"), [("SOL", 1_500_000_000), ("USDC", 25_000_000)])
def test_solana_an_exact_payment_is_seen_when_confirmed_and_confirmed_when_finalized(
    api_client, solana, currency, amount
):
    draft, reference = sol_draft(api_client, currency, amount)
    signature = sol_pay(solana, reference, currency, amount)
    tick("Solana", "solana")
    assert status_of(api_client, draft)["status"] == "Seen"
    solana.finalize(signature)
    tick("Solana", "solana")

    assert status_of(api_client, draft)["status"] == "Confirmed"
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed"]
    assert payload(draft, "draft.confirmed")["txId"] == signature
    assert unmatched(api_client) == [] and AccruedFee.objects.filter(draft_id=draft["id"]).count() == 1


def test_solana_a_payment_twenty_percent_short_is_reported_once_final(api_client, solana):
    draft, reference = sol_draft(api_client, "USDC", 25_000_000)
    signature = sol_pay(solana, reference, "USDC", 20_000_000)
    tick("Solana", "solana")
    assert unmatched(api_client) == []  # not final yet
    solana.finalize(signature)
    tick("Solana", "solana")
    tick("Solana", "solana")

    assert status_of(api_client, draft)["status"] == "Pending"
    (item,) = unmatched(api_client)
    assert item["txId"] == signature and item["candidateDraftIds"] == [draft["id"]]
    assert [e["txId"] for e in unmatched_events()] == [signature]


def test_solana_a_payment_split_sixty_forty_under_one_reference_pays_the_draft(api_client, solana):
    draft, reference = sol_draft(api_client, "USDC", 25_000_000)
    first = sol_pay(solana, reference, "USDC", 15_000_000)
    second = sol_pay(solana, reference, "USDC", 10_000_000)
    tick("Solana", "solana")
    assert status_of(api_client, draft)["status"] == "Seen"
    solana.finalize(first)
    tick("Solana", "solana")
    assert status_of(api_client, draft)["status"] == "Seen"  # final only when every part is
    solana.finalize(second)
    tick("Solana", "solana")

    status = status_of(api_client, draft)
    assert status["status"] == "Confirmed" and sorted(status["txIds"]) == sorted([first, second])
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed"]
    assert payload(draft, "draft.confirmed")["receivedAmountSats"] == 25_000_000
    assert unmatched(api_client) == []


def test_solana_a_draft_paid_twice_reports_the_second_payment(api_client, solana):
    draft, reference = sol_draft(api_client, "SOL", 1_500_000_000)
    first = sol_pay(solana, reference, "SOL", 1_500_000_000)
    solana.finalize(first)
    tick("Solana", "solana")
    assert status_of(api_client, draft)["status"] == "Confirmed"
    second = sol_pay(solana, reference, "SOL", 1_500_000_000)
    solana.finalize(second)
    tick("Solana", "solana")

    assert status_of(api_client, draft)["txIds"] == [first]
    (item,) = unmatched(api_client)
    assert item["txId"] == second and item["candidateDraftIds"] == [draft["id"]]
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed", "draft.paid_again"]


def test_solana_a_payment_rolled_back_before_finality_sends_the_draft_back_to_pending(api_client, solana):
    draft, reference = sol_draft(api_client, "SOL", 1_500_000_000)
    signature = sol_pay(solana, reference, "SOL", 1_500_000_000)
    tick("Solana", "solana")
    solana.roll_back(signature)
    tick("Solana", "solana")
    assert status_of(api_client, draft)["status"] == "Pending"
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.payment_reverted"]
    assert unmatched(api_client) == []

"""What payers really send, on a real EVM chain (anvil as Ethereum and Base), watched by the
real beat task: exact, short, over, far off, split, twice, late, too late, too early, reorged,
and many at once. Each scenario ends with the draft's status, its events in order, their
payloads, the merchant's list of unmatched transfers, and nothing counted twice."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from standardwebhooks import Webhook as StandardWebhook

from drafts.models import Draft
from drafts.tasks import expire_drafts
from fees.models import AccruedFee
from tests.scenarios.conftest import (
    assert_nothing_counted_twice,
    deliver_all,
    events_of,
    payload,
    unmatched_events,
)
from webhooks.models import Event

pytestmark = pytest.mark.django_db

USDC_25 = 25_000_000  # 25 USDC in base units


@pytest.mark.parametrize(("currency", "amount"), [("USDC", USDC_25), ("ETH", 12_345_678)])
def test_an_exact_payment_is_seen_then_confirmed_once(chain, currency, amount):
    draft = chain.draft(currency=currency, amountSats=amount)
    tx = chain.pay(draft, amount, currency)
    chain.tick()
    assert chain.status(draft) | {"updatedAt": None} == {
        "id": draft["id"],
        "status": "Seen",
        "txId": tx,
        "txIds": [tx],
        "receivedAmountSats": amount,
        "confirmations": 1,
        "requiredConfirmations": 12,
        "updatedAt": None,
    }
    chain.mine(10)
    chain.tick()
    assert chain.status(draft)["status"] == "Seen" and chain.status(draft)["confirmations"] == 11
    chain.mine(1)
    chain.tick()
    chain.settle()  # more blocks and passes change nothing

    assert chain.status(draft)["status"] == "Confirmed"
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed"]
    confirmed = payload(draft, "draft.confirmed")
    assert confirmed["status"] == "Confirmed" and confirmed["txId"] == tx and confirmed["confirmations"] == 12
    assert confirmed["amountSats"] == amount and confirmed["sentCurrency"] == currency
    assert confirmed["network"] == chain.network and confirmed["paidLate"] is False
    assert "receivedAmountSats" not in confirmed and "acceptedByOwner" not in confirmed
    assert confirmed["platformFee"]["accrued"] is True
    assert AccruedFee.objects.get(draft_id=draft["id"]).fee_base_units == draft["platformFee"]["feeBaseUnits"]
    assert chain.transfers() == [] and unmatched_events() == []
    assert_nothing_counted_twice(chain.network)


def test_a_payment_four_percent_short_waits_for_the_owner_then_confirms_with_the_received_amount(chain):
    draft = chain.draft(amountSats=USDC_25)
    tx = chain.pay(draft, 24_000_000)
    chain.tick()
    body = chain.get(draft)
    assert body["status"] == "AmountMismatch"
    mismatch = body["amountMismatch"]
    assert (mismatch["txId"], mismatch["expectedBaseUnits"], mismatch["receivedBaseUnits"]) == (
        tx,
        USDC_25,
        24_000_000,
    )
    assert mismatch["differenceBaseUnits"] == -1_000_000 and mismatch["acceptedAt"] is None
    announced = payload(draft, "draft.amount_mismatch")
    assert announced["status"] == "AmountMismatch" and announced["receivedAmountSats"] == 24_000_000

    accepted = chain.api.post(f"/api/v1/drafts/{draft['id']}/accept-received")
    assert accepted.status_code == 200 and accepted.json()["status"] == "Seen"
    chain.settle()

    assert chain.status(draft)["status"] == "Confirmed"
    assert events_of(draft) == ["draft.created", "draft.amount_mismatch", "draft.seen", "draft.confirmed"]
    assert payload(draft, "draft.seen")["acceptedByOwner"] is True
    confirmed = payload(draft, "draft.confirmed")
    assert confirmed["receivedAmountSats"] == 24_000_000 and confirmed["receivedAmount"] == "24.000000"
    assert confirmed["amountSats"] == USDC_25 and confirmed["txId"] == tx
    assert chain.transfers() == []
    assert_nothing_counted_twice(chain.network)


def test_a_payment_four_percent_over_is_a_mismatch_above_the_billed_amount_never_absorbed(chain):
    draft = chain.draft(amountSats=USDC_25)
    tx = chain.pay(draft, 26_000_000)
    chain.settle()  # settled on chain: still the owner's decision, never silently confirmed

    body = chain.get(draft)
    assert body["status"] == "AmountMismatch"
    assert body["amountMismatch"]["receivedBaseUnits"] == 26_000_000
    assert body["amountMismatch"]["differenceBaseUnits"] == 1_000_000
    assert body["amountMismatch"]["confirmations"] >= 12
    assert payload(draft, "draft.amount_mismatch")["receivedAmountSats"] == 26_000_000
    assert chain.transfers() == []  # it is accounted for by the draft, not reported twice
    assert not AccruedFee.objects.filter(draft_id=draft["id"]).exists()

    assert chain.api.post(f"/api/v1/drafts/{draft['id']}/accept-received").json()["status"] == "Confirmed"
    assert events_of(draft) == ["draft.created", "draft.amount_mismatch", "draft.seen", "draft.confirmed"]
    confirmed = payload(draft, "draft.confirmed")
    assert confirmed["receivedAmountSats"] == 26_000_000 and confirmed["txId"] == tx
    assert_nothing_counted_twice(chain.network)


def test_a_payment_twenty_percent_short_is_reported_unmatched_once_and_can_be_attached(chain):
    draft = chain.draft(amountSats=USDC_25)
    tx = chain.pay(draft, 20_000_000)
    chain.tick()
    assert chain.status(draft)["status"] == "Pending"
    assert chain.transfers() == []  # not settled yet: it could still be reorged away

    chain.settle()
    chain.settle()  # a second settled pass announces nothing new
    assert chain.status(draft)["status"] == "Pending"
    (item,) = chain.transfers(matched=False)
    assert item["txId"] == tx and item["amountSats"] == 20_000_000 and item["amount"] == "20.000000"
    assert item["network"] == chain.network and item["currency"] == "USDC" and item["onChain"] is True
    assert item["receiverAddress"].lower() == draft["receiverAddress"].lower()
    assert item["candidateDraftIds"] == [draft["id"]] and item["matched"] is False
    (announced,) = unmatched_events()
    assert announced["transferId"] == item["id"] and announced["txId"] == tx
    assert announced["candidateDraftIds"] == [draft["id"]] and announced["amountSats"] == 20_000_000
    assert events_of(draft) == ["draft.created"]
    assert_nothing_counted_twice(chain.network)

    url = f"/api/v1/transfers/{item['id']}/attach"
    refused = chain.api.post(url, {"draftId": draft["id"]}, format="json")
    assert refused.status_code == 409 and refused.json()["errors"][0]["field"] == "acceptAmount"
    assert chain.api.post(url, {"draftId": draft["id"], "acceptAmount": True}, format="json").status_code == 200
    chain.tick()

    assert chain.status(draft)["status"] == "Confirmed"
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed"]
    assert payload(draft, "draft.seen")["acceptedByOwner"] is True
    assert payload(draft, "draft.confirmed")["receivedAmountSats"] == 20_000_000
    (attached,) = chain.transfers(matched=True)
    assert attached["matchedDraftId"] == draft["id"] and chain.transfers(matched=False) == []
    assert len(unmatched_events()) == 1
    assert_nothing_counted_twice(chain.network)


def test_a_payment_split_sixty_forty_pays_the_draft_with_both_transactions(chain):
    draft = chain.draft(amountSats=USDC_25)
    first = chain.pay(draft, 15_000_000)
    chain.tick()
    assert chain.status(draft)["status"] == "Pending"  # 60% alone pays nothing (and is not settled)
    second = chain.pay(draft, 10_000_000)
    chain.tick()
    status = chain.status(draft)
    assert status["status"] == "Seen" and status["txIds"] == [first, second] and status["txId"] == first
    assert status["confirmations"] == 1  # the youngest part counts
    chain.settle()

    status = chain.status(draft)
    assert status["status"] == "Confirmed" and status["receivedAmountSats"] == USDC_25
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed"]
    confirmed = payload(draft, "draft.confirmed")
    assert confirmed["txIds"] == [first, second] and confirmed["receivedAmountSats"] == USDC_25
    assert payload(draft, "draft.seen")["txIds"] == [first, second]
    assert chain.transfers() == [] and unmatched_events() == []
    assert_nothing_counted_twice(chain.network)


def test_a_split_whose_first_part_was_already_reported_marks_that_report_matched(ethereum_chain):
    chain = ethereum_chain
    draft = chain.draft(amountSats=USDC_25)
    first = chain.pay(draft, 15_000_000)
    chain.settle()  # the first part, settled and paying nothing alone, is reported
    (reported,) = chain.transfers(matched=False)
    assert reported["txId"] == first

    chain.pay(draft, 10_000_000)
    chain.settle()

    assert chain.status(draft)["status"] == "Confirmed"
    assert chain.transfers(matched=False) == []
    (matched,) = chain.transfers(matched=True)
    assert matched["txId"] == first and matched["matchedDraftId"] == draft["id"]
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed"]
    assert len(unmatched_events()) == 1
    assert_nothing_counted_twice(chain.network)


def test_a_draft_paid_twice_reports_the_second_payment_and_the_receiver_gets_each_event_signed_once(
    chain, make_receiver, settings
):
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    receiver = make_receiver()
    subscribed = ["draft.created", "draft.seen", "draft.confirmed", "transfer.unmatched"]
    hook = chain.api.post("/api/v1/webhooks", {"url": receiver.url, "events": subscribed}, format="json").json()
    draft = chain.draft(amountSats=USDC_25)
    first = chain.pay(draft, USDC_25)
    chain.tick()
    second = chain.pay(draft, USDC_25)  # the payer's wallet sends it again before the first confirms
    chain.settle()
    chain.settle()  # nothing new is announced

    status = chain.status(draft)
    assert status["status"] == "Confirmed" and status["txIds"] == [first]
    (item,) = chain.transfers(matched=False)
    assert item["txId"] == second and item["candidateDraftIds"] == [draft["id"]]
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed", "draft.paid_again"]
    assert [e["txId"] for e in unmatched_events()] == [second]
    assert_nothing_counted_twice(chain.network)

    deliver_all()
    deliveries = receiver.requests
    bodies = [json.loads(r.body) for r in deliveries]
    # One object's events arrive in its sequence; the transfer's report is another object's.
    assert sorted(b["event"] for b in bodies) == sorted(subscribed)
    assert [b["event"] for b in bodies if b["objectId"] == draft["id"]] == subscribed[:3]
    assert [b["sequence"] for b in bodies if b["objectId"] == draft["id"]] == [1, 2, 3]
    events = {str(e.id): e for e in Event.objects.filter(type__in=subscribed)}  # paid_again: not asked for
    assert set(events) == {b["id"] for b in bodies}
    for request, body in zip(deliveries, bodies, strict=True):
        event = events[body["id"]]
        headers = {name.lower(): value for name, value in request.headers.items()}
        expected = "sha256=" + hmac.new(hook["secret"].encode(), request.body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(headers["x-service-signature"], expected)
        assert headers["x-service-event"] == event.type
        StandardWebhook(hook["secret"]).verify(
            request.body, {k: headers[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")}
        )
        assert (body["event"], body["data"]) == (event.type, event.data)
    unmatched = next(b["data"] for b in bodies if b["event"] == "transfer.unmatched")
    assert unmatched["txId"] == second and unmatched["transferId"] == item["id"]
    assert unmatched["candidateDraftIds"] == [draft["id"]] and unmatched["amountSats"] == USDC_25
    assert len({r.headers["X-Service-Delivery"] for r in deliveries}) == 4


def test_a_draft_paid_again_after_it_confirmed_reports_the_second_payment_for_a_refund(chain):
    draft = chain.draft(amountSats=USDC_25)
    first = chain.pay(draft, USDC_25)
    chain.settle()
    assert chain.status(draft)["status"] == "Confirmed"

    second = chain.pay(draft, USDC_25)  # the payer's wallet sends it again, later
    chain.settle()

    assert chain.status(draft)["txIds"] == [first]
    (item,) = chain.transfers(matched=False)
    assert item["txId"] == second and item["candidateDraftIds"] == [draft["id"]]
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed", "draft.paid_again"]
    assert_nothing_counted_twice(chain.network)


def test_a_payment_after_expiry_inside_the_grace_window_pays_the_draft_late(chain, settings):
    settings.DRAFT_LATE_PAYMENT_GRACE_HOURS = 2
    draft = chain.draft(amountSats=USDC_25, expiryHours=1)
    with time_machine.travel(timezone.now() + timedelta(minutes=61)):
        expire_drafts()
        assert chain.status(draft)["status"] == "Expired"
        tx = chain.pay(draft, USDC_25)
        chain.tick()
        assert chain.status(draft)["status"] == "Seen"
        chain.settle()

    assert chain.status(draft)["status"] == "Confirmed" and chain.get(draft)["paidTxId"] == tx
    assert events_of(draft) == ["draft.created", "draft.expired", "draft.seen", "draft.confirmed"]
    assert payload(draft, "draft.seen")["paidLate"] is True
    confirmed = payload(draft, "draft.confirmed")
    assert confirmed["paidLate"] is True and confirmed["txId"] == tx and confirmed["status"] == "Confirmed"
    assert chain.transfers() == []
    assert_nothing_counted_twice(chain.network)


def test_a_payment_after_the_grace_window_is_reported_unmatched_not_silently_dropped(chain, settings):
    settings.DRAFT_LATE_PAYMENT_GRACE_HOURS = 1
    draft = chain.draft(amountSats=USDC_25, expiryHours=1)
    with time_machine.travel(timezone.now() + timedelta(hours=2, minutes=1)):
        expire_drafts()
        tx = chain.pay(draft, USDC_25)
        chain.tick()
        chain.settle()

        assert chain.status(draft)["status"] == "Expired"
        (item,) = chain.transfers(matched=False)
        assert item["txId"] == tx and item["candidateDraftIds"] == [draft["id"]]
    assert events_of(draft) == ["draft.created", "draft.expired"]
    assert [e["txId"] for e in unmatched_events()] == [tx]
    assert_nothing_counted_twice(chain.network)


def test_a_payment_already_on_chain_before_the_draft_existed_does_not_pay_it(chain):
    receiver = chain.new_address()
    older = chain.draft(receiver=receiver, amountSats=30_000_000)  # the address is watched already
    tx = chain.pay(receiver, USDC_25)
    chain.tick()
    draft = chain.draft(receiver=receiver, amountSats=USDC_25)  # the same amount, billed afterwards
    chain.tick()
    chain.settle()

    assert chain.status(draft)["status"] == "Pending" and chain.status(older)["status"] == "Pending"
    (item,) = chain.transfers(matched=False)
    assert item["txId"] == tx and item["candidateDraftIds"] == [older["id"], draft["id"]]
    assert events_of(draft) == ["draft.created"]
    assert_nothing_counted_twice(chain.network)


def test_a_payment_in_a_block_before_the_draft_was_created_does_not_pay_it_even_if_read_later(chain):
    receiver = chain.new_address()
    tx = chain.pay(receiver, USDC_25)  # mined before the draft exists; the watcher has not read it yet
    with time_machine.travel(timezone.now() + timedelta(minutes=2)):  # the merchant bills it two minutes later
        draft = chain.draft(receiver=receiver, amountSats=USDC_25)
        chain.tick()
        chain.settle()

        assert chain.status(draft)["status"] == "Pending"
        (item,) = chain.transfers(matched=False)
        assert item["txId"] == tx and item["candidateDraftIds"] == [draft["id"]]
        assert item["reason"] == "sentBeforeDraft"
        assert events_of(draft) == ["draft.created"]

        # The payer pays again, after the bill: the chain's clock is where the merchant's is.
        chain.node.w3.provider.make_request("evm_increaseTime", [180])
        again = chain.pay(receiver, USDC_25)
        chain.settle()
        now = chain.get(draft)
        assert now["status"] == "Confirmed" and now["paidTxIds"] == [again]
    assert_nothing_counted_twice(chain.network)


def test_two_hundred_open_drafts_at_nudged_amounts_are_each_paid_by_their_own_transfer(ethereum_chain):
    chain = ethereum_chain
    receiver = chain.new_address()
    item = {"network": chain.network, "currency": "USDC", "receiverAddress": receiver}
    item |= {"fiatCurrency": "USD", "fiatAmount": 25}
    drafts = []
    for _ in range(8):
        response = chain.api.post("/api/v1/drafts/batch", {"items": [{"draft": item}] * 25}, format="json")
        assert response.status_code == 200, response.json()
        assert [result["error"] for result in response.json()] == [None] * 25
        drafts += [result["draft"] for result in response.json()]
    amounts = [d["amountSats"] for d in drafts]
    assert len(set(amounts)) == 200 and max(amounts) - min(amounts) == 199  # nudged one unit apart
    assert {d["fiatAmount"] for d in drafts} == {25}

    order = random.Random(16).sample(drafts, len(drafts))
    paid_by: dict[str, str] = {}
    rpc = chain.node.w3.provider.make_request
    rpc("evm_setAutomine", [False])  # a hundred payments to a block, in random order
    try:
        for batch in (order[:100], order[100:]):
            for draft in batch:
                paid_by[draft["id"]] = chain.pay(draft, draft["amountSats"], mined=False)
            chain.mine(1)
            chain.tick()
    finally:
        rpc("evm_setAutomine", [True])
    chain.mine(11)
    chain.tick()

    paid = Draft.objects.filter(id__in=paid_by).values_list("id", "status", "paid_tx_ids", "received_base_units")
    billed = {d["id"]: d["amountSats"] for d in drafts}
    assert {str(id_): (status, txs, received) for id_, status, txs, received in paid} == {
        id_: ("Confirmed", [tx], billed[id_]) for id_, tx in paid_by.items()
    }
    assert Event.objects.filter(type="draft.confirmed").count() == 200
    assert chain.transfers() == [] and unmatched_events() == []
    assert_nothing_counted_twice(chain.network)
    assert AccruedFee.objects.count() == 200


def test_a_contract_wallet_paying_eth_through_internal_calls_pays_the_draft_once_and_reports_the_extra_call(chain):
    draft = chain.draft(currency="ETH", amountSats=5_000_000)  # 0.005 ETH, in gwei
    wallet = chain.node.deploy_wallet()
    wei = 5_000_000 * 10**9
    receiver = draft["receiverAddress"]
    tx = chain.node.pay_through_wallet(wallet, [(receiver, wei, b""), (receiver, wei, b"")])  # a payout run twice
    chain.node.w3.eth.wait_for_transaction_receipt(tx)
    chain.tick()
    assert chain.status(draft)["status"] == "Seen" and chain.status(draft)["txId"] == tx
    chain.settle()

    status = chain.status(draft)
    assert status["status"] == "Confirmed" and status["txIds"] == [tx] and status["receivedAmountSats"] == 5_000_000
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed"]
    confirmed = payload(draft, "draft.confirmed")
    assert confirmed["txId"] == tx and confirmed["sentCurrency"] == "ETH" and "receivedAmountSats" not in confirmed
    (extra,) = chain.transfers(matched=False)  # the second internal call, for a refund
    assert extra["txId"] == tx and extra["outputIndex"] is None and extra["amountSats"] == 5_000_000
    assert extra["candidateDraftIds"] == [draft["id"]]
    assert_nothing_counted_twice(chain.network)

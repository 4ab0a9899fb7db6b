"""Reorganisations on a real EVM chain (anvil): a payment dropped, moved or mined again."""

from __future__ import annotations

import json

import pytest

from notifications.emails import email_render
from notifications.models import EmailNotification
from tests.scenarios.conftest import (
    assert_nothing_counted_twice,
    deliver_all,
    events_of,
    payload,
    payloads,
)

pytestmark = pytest.mark.django_db

USDC_25 = 25_000_000  # 25 USDC in base units


def test_a_reorg_between_seen_and_confirmed_that_drops_the_payment_sends_the_draft_back_to_pending(chain):
    draft = chain.draft(amountSats=USDC_25)
    fork = chain.node.snapshot()
    tx = chain.pay(draft, USDC_25)
    chain.mine(2)
    chain.tick()
    assert chain.status(draft)["status"] == "Seen" and chain.status(draft)["confirmations"] == 3

    chain.node.revert(fork)  # the blocks with the payment are gone
    chain.mine(5)  # a longer branch without it
    chain.tick()
    status = chain.status(draft)
    assert status["status"] == "Pending" and status["txId"] is None and status["confirmations"] == 0
    chain.settle()
    assert chain.status(draft)["status"] == "Pending"
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.payment_reverted"]
    assert chain.transfers() == []  # a transfer no longer on chain is nobody's money

    again = chain.pay(draft, USDC_25, sender=chain.node.w3.eth.accounts[1])  # paid again, from another wallet
    chain.tick()
    chain.settle()
    status = chain.status(draft)
    assert status["status"] == "Confirmed" and status["txId"] == again != tx
    assert events_of(draft) == [
        "draft.created",
        "draft.seen",
        "draft.payment_reverted",
        "draft.seen",
        "draft.confirmed",
    ]
    seen = payloads(draft, "draft.seen")
    assert [s["txId"] for s in seen] == [tx, again]
    assert payload(draft, "draft.confirmed")["txId"] == again
    assert_nothing_counted_twice(chain.network)


def test_a_reorg_that_drops_a_seen_payment_tells_the_merchant_by_opt_in_event_and_email(
    ethereum_chain, make_receiver, settings
):
    chain = ethereum_chain
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    everything, opted_in = make_receiver(), make_receiver()
    assert chain.api.post("/api/v1/webhooks", {"url": everything.url}, format="json").status_code == 200
    hook = {"url": opted_in.url, "events": ["draft.seen", "draft.payment_reverted"]}
    assert chain.api.post("/api/v1/webhooks", hook, format="json").status_code == 200
    draft = chain.draft(amountSats=USDC_25)
    fork = chain.node.snapshot()
    tx = chain.pay(draft, USDC_25)
    chain.mine(1)
    chain.tick()
    assert chain.status(draft)["status"] == "Seen"

    chain.node.revert(fork)  # evm_revert: the block with the payment is gone
    chain.mine(3)  # a longer branch without it
    chain.tick()

    assert chain.status(draft)["status"] == "Pending"
    reverted = payload(draft, "draft.payment_reverted")
    assert (reverted["draftId"], reverted["txId"], reverted["status"]) == (draft["id"], tx, "Pending")
    assert reverted["previousStatus"] == "Seen"
    deliver_all()
    assert [json.loads(r.body)["event"] for r in opted_in.requests] == ["draft.seen", "draft.payment_reverted"]
    assert "draft.payment_reverted" not in [json.loads(r.body)["event"] for r in everything.requests]
    (email,) = EmailNotification.objects.filter(context__event="draft.payment_reverted")
    subject, text, _ = email_render(email)
    assert draft["id"][:8] in subject and "left the chain" in subject
    assert tx in text and "Pending again" in text


def test_a_reorg_that_puts_the_payment_in_another_block_keeps_the_draft_seen_and_confirms_it_once(chain):
    draft = chain.draft(amountSats=USDC_25)
    fork = chain.node.snapshot()
    tx = chain.pay(draft, USDC_25)
    raw = chain.node.w3.provider.make_request("eth_getRawTransactionByHash", [tx])["result"]
    chain.tick()
    assert chain.status(draft)["status"] == "Seen"

    chain.node.revert(fork)
    chain.mine(3)  # the other branch: the same transaction, three blocks later
    rebroadcast = chain.node.w3.eth.send_raw_transaction(raw)
    assert rebroadcast.to_0x_hex() == tx
    chain.node.w3.eth.wait_for_transaction_receipt(rebroadcast)
    chain.mine(1)
    chain.tick()
    status = chain.status(draft)
    assert status["status"] == "Seen" and status["txId"] == tx and status["confirmations"] == 2
    chain.mine(10)
    chain.tick()

    assert chain.status(draft)["status"] == "Confirmed"
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed"]
    confirmed = payload(draft, "draft.confirmed")
    assert confirmed["txId"] == tx and confirmed["confirmations"] == 12
    assert chain.transfers() == []
    assert_nothing_counted_twice(chain.network)


def test_a_payment_dropped_by_a_reorg_and_mined_again_after_the_payer_paid_anew_is_reported(chain):
    draft = chain.draft(amountSats=USDC_25)
    fork = chain.node.snapshot()
    dropped = chain.pay(draft, USDC_25)
    raw = chain.node.w3.provider.make_request("eth_getRawTransactionByHash", [dropped])["result"]
    chain.tick()
    chain.node.revert(fork)
    chain.mine(3)
    chain.tick()
    assert chain.status(draft)["status"] == "Pending"

    again = chain.pay(draft, USDC_25, sender=chain.node.w3.eth.accounts[1])  # the payer pays anew
    chain.tick()
    assert chain.status(draft)["status"] == "Seen" and chain.status(draft)["txId"] == again
    chain.node.w3.eth.wait_for_transaction_receipt(chain.node.w3.eth.send_raw_transaction(raw))  # mined after all
    chain.settle()
    chain.settle()

    status = chain.status(draft)
    assert status["status"] == "Confirmed" and status["txIds"] == [again]
    (item,) = chain.transfers(matched=False)  # the merchant got both: one is reported for a refund
    assert item["txId"] == dropped and item["candidateDraftIds"] == [draft["id"]]
    assert events_of(draft) == [
        "draft.created",
        "draft.seen",
        "draft.payment_reverted",
        "draft.seen",
        "draft.confirmed",
        "draft.paid_again",  # the dropped payment mined again: a repeat, reported on its draft
    ]
    assert_nothing_counted_twice(chain.network)

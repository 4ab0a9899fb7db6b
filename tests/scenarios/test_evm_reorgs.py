"""Reorganisations on a real EVM chain (anvil): a payment dropped, moved or mined again."""

from __future__ import annotations

import json

import pytest
import requests

from core.ids import short_id
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


def test_a_reorg_that_drops_a_seen_payment_tells_every_endpoint_and_emails_the_merchant(
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
    # Every endpoint gets it by default (docs/decisions.md): a reversal is never opt-in.
    assert [json.loads(r.body)["event"] for r in everything.requests][-1] == "draft.payment_reverted"
    (email,) = EmailNotification.objects.filter(context__event="draft.payment_reverted")
    subject, text, _ = email_render(email)
    assert short_id(draft["id"]) in subject and "left the chain" in subject
    assert tx in text and "Pending again" in text


def test_a_reorg_deeper_than_the_required_confirmations_reverts_a_confirmed_draft(ethereum_chain, settings):
    """evm_snapshot/evm_revert past a Confirmed payment, before the finality depth: the draft says
    so (paymentReverted, the time and txids) and goes back to Pending; past the depth it is final."""
    chain = ethereum_chain
    draft = chain.draft(amountSats=USDC_25)
    fork = chain.node.snapshot()
    tx = chain.pay(draft, USDC_25)
    chain.settle()
    confirmed = chain.get(draft)
    assert confirmed["status"] == "Confirmed" and confirmed["finalizedAt"] is None
    assert confirmed["confirmations"] > confirmed["requiredConfirmations"] - 1

    chain.node.revert(fork)  # every block since the snapshot is gone, the payment with them
    chain.mine(confirmed["confirmations"] + 2)  # a longer branch without it
    chain.tick()
    now = chain.get(draft)
    assert now["status"] == "Pending" and now["paidTxIds"] == [] and now["confirmations"] == 0
    assert now["paymentReverted"] is True and now["revertedTxIds"] == [tx] and now["paymentRevertedAt"]
    assert events_of(draft) == ["draft.created", "draft.seen", "draft.confirmed", "draft.payment_reverted"]
    assert payload(draft, "draft.payment_reverted")["previousStatus"] == "Confirmed"

    again = chain.pay(draft, USDC_25)
    chain.settle()
    chain.mine(settings.FINALITY_DEPTHS[chain.network])
    chain.tick()
    final = chain.get(draft)
    assert final["status"] == "Confirmed" and final["paidTxIds"] == [again] and final["paymentReverted"] is False
    assert final["finalizedAt"] is not None and final["confirmations"] >= settings.FINALITY_DEPTHS[chain.network]


def finalized_block(chain) -> int:
    return chain.node.w3.eth.get_block("finalized")["number"]


def test_a_confirmed_payment_is_final_only_once_the_nodes_finalized_block_passes_it(ethereum_chain, settings):
    """anvil names a `finalized` block two epochs (64 blocks) below its head. The finality depth,
    set to 13 here, does not make a payment final while that block is below it, so a reorg in that
    time still takes it back; finalizedAt is set in the pass where the finalized block reaches it."""
    chain = ethereum_chain
    settings.FINALITY_DEPTHS = {**settings.FINALITY_DEPTHS, "Ethereum": 13}
    draft = chain.draft(amountSats=USDC_25)
    fork = chain.node.snapshot()
    tx = chain.pay(draft, USDC_25)
    chain.settle()
    chain.mine(20)
    chain.tick()
    confirmed = chain.get(draft)
    assert confirmed["status"] == "Confirmed" and confirmed["confirmations"] > 13
    assert confirmed["finalizedAt"] is None  # 32 blocks deep, the node's finalized block is not there yet

    chain.node.revert(fork)
    chain.mine(confirmed["confirmations"] + 2)  # a longer branch without it
    chain.tick()
    now = chain.get(draft)
    assert now["status"] == "Pending" and now["paymentReverted"] is True and now["revertedTxIds"] == [tx]

    again = chain.pay(draft, USDC_25)
    block = chain.node.w3.eth.get_transaction_receipt(again)["blockNumber"]
    chain.settle()
    while finalized_block(chain) < block - 1:  # anvil's finalized block is 0 until the head passes 64
        chain.mine(block - 1 - finalized_block(chain))
    assert finalized_block(chain) == block - 1
    chain.tick()
    assert chain.get(draft)["finalizedAt"] is None
    chain.mine(1)
    assert finalized_block(chain) == block
    chain.tick()
    final = chain.get(draft)
    assert final["status"] == "Confirmed" and final["paidTxIds"] == [again] and final["finalizedAt"] is not None
    assert events_of(draft) == [
        "draft.created",
        "draft.seen",
        "draft.confirmed",
        "draft.payment_reverted",
        "draft.seen",
        "draft.confirmed",
    ]


def test_a_node_without_the_finalized_tag_makes_a_payment_final_at_the_finality_depth(
    ethereum_chain, settings, fake_server
):
    """A node that answers the `finalized` tag with an error (as one without it does): the
    watcher counts to FINALITY_DEPTH_ETHEREUM instead."""
    chain = ethereum_chain
    upstream = chain.node.url

    def handler(method, path, body, headers):
        request = json.loads(body)
        items = request if isinstance(request, list) else [request]
        passed = [i for i in items if not (i["method"] == "eth_getBlockByNumber" and i["params"][0] == "finalized")]
        answers = {a["id"]: a for a in requests.post(upstream, json=passed, timeout=30).json()} if passed else {}
        unknown = {"code": -39001, "message": "Unknown block"}
        out = [answers.get(i["id"]) or {"jsonrpc": "2.0", "id": i["id"], "error": unknown} for i in items]
        return 200, out if isinstance(request, list) else out[0]

    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": fake_server(handler).url}}
    settings.FINALITY_DEPTHS = {**settings.FINALITY_DEPTHS, "Ethereum": 20}
    draft = chain.draft(amountSats=USDC_25)
    chain.pay(draft, USDC_25)
    chain.mine(18)  # 19 confirmations
    chain.tick()
    confirmed = chain.get(draft)
    assert confirmed["status"] == "Confirmed" and confirmed["confirmations"] == 19 and confirmed["finalizedAt"] is None
    chain.mine(1)
    chain.tick()
    final = chain.get(draft)
    assert final["confirmations"] == 20 and final["finalizedAt"] is not None


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

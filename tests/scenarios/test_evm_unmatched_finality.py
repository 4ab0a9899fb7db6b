"""Unmatched transfers followed to finality on a real EVM chain (anvil): reported at the asset's
default confirmations, marked final once the node's `finalized` block passes them, and marked
reverted (off the chain, not attachable, not waiting for the merchant) when a reorg deeper than
those confirmations takes one away before then."""

from __future__ import annotations

import pytest

from attention.selectors import attention_count
from tests.scenarios.conftest import DEFAULT_CONFIRMATIONS, unmatched_events

pytestmark = pytest.mark.django_db

USDC_25 = 25_000_000


def finalized_block(chain) -> int:
    return chain.node.w3.eth.get_block("finalized")["number"]


def test_a_reported_transfer_a_reorg_takes_away_is_marked_reverted_not_final_and_cannot_be_attached(
    ethereum_chain, owner
):
    chain = ethereum_chain
    draft = chain.draft(amountSats=USDC_25)
    fork = chain.node.snapshot()
    tx = chain.pay(draft, 15_000_000)  # 40% short: nobody's to guess, the merchant's to look at
    block = chain.node.w3.eth.get_transaction_receipt(tx)["blockNumber"]
    chain.settle()
    (item,) = chain.transfers(matched=False)
    assert item["txId"] == tx and item["onChain"] is True
    assert item["final"] is False and item["revertedAt"] is None
    assert attention_count(owner) == 1
    (announced,) = unmatched_events()
    assert announced["txId"] == tx

    chain.node.revert(fork)  # deeper than the 12 confirmations it was reported at
    chain.mine(DEFAULT_CONFIRMATIONS + 3)  # a longer branch without it
    chain.tick()
    (item,) = chain.transfers(matched=False)
    assert item["txId"] == tx and item["onChain"] is False
    assert item["revertedAt"] is not None and item["final"] is False
    assert attention_count(owner) == 0  # nothing waits for the merchant: the money is gone
    attach = chain.api.post(f"/api/v1/transfers/{item['id']}/attach", {"draftId": draft["id"]}, format="json")
    assert attach.status_code == 409 and attach.json()["code"] == "transfer_not_on_chain"

    while finalized_block(chain) < block:  # the finalized block passes where it was
        chain.mine(block - finalized_block(chain))
    chain.tick()
    (item,) = chain.transfers(matched=False)
    assert item["final"] is False and item["onChain"] is False  # never final: it is not on the chain
    assert chain.status(draft)["status"] == "Pending"


def test_a_reported_transfer_is_final_once_the_nodes_finalized_block_passes_it(ethereum_chain, settings):
    """anvil names its `finalized` block 64 below its head; FINALITY_DEPTHS set lower must not
    make the report final earlier (the node's tag decides, as for a draft's payment)."""
    chain = ethereum_chain
    settings.FINALITY_DEPTHS = {**settings.FINALITY_DEPTHS, "Ethereum": 13}
    draft = chain.draft(amountSats=USDC_25)
    tx = chain.pay(draft, 15_000_000)
    block = chain.node.w3.eth.get_transaction_receipt(tx)["blockNumber"]
    chain.mine(20)
    chain.tick()
    (item,) = chain.transfers(matched=False)
    assert item["txId"] == tx and item["final"] is False  # 21 deep, past the depth, not finalized

    while finalized_block(chain) < block - 1:
        chain.mine(block - 1 - finalized_block(chain))
    chain.tick()
    assert chain.transfers(matched=False)[0]["final"] is False
    chain.mine()
    assert finalized_block(chain) == block
    chain.tick()
    (item,) = chain.transfers(matched=False)
    assert item["final"] is True and item["onChain"] is True
    assert item["revertedAt"] is None

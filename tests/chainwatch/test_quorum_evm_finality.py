"""Finality with several EVM endpoints: the `finalized` block the quorum agrees on, on real anvil
nodes holding one chain (tests/chainwatch/test_quorum_evm.py's TwinAnvils). anvil names its
`finalized` block two epochs below its head; nodes started with different epoch lengths name
different ones, as nodes of different providers do. FINALITY_DEPTHS is set low, so a payment
made final by counting blocks would show at once."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
import requests

from chainwatch.models import TransferQuorum
from drafts.enums import DraftStatus
from tests.chainwatch.test_quorum_evm import TwinAnvils, usdc_draft, watch

pytestmark = pytest.mark.django_db


@pytest.fixture
def nodes(settings) -> Iterator[Callable[[tuple[int, ...]], TwinAnvils]]:
    started: list[TwinAnvils] = []

    def start(slots: tuple[int, ...]) -> TwinAnvils:
        chain = TwinAnvils(slots)
        started.append(chain)
        settings.TOKEN_ADDRESSES = {"USDC": {"Ethereum": chain.token.address}}
        settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 10
        settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
        settings.CHAINWATCH_HTTP_TIMEOUT_SECONDS = 5
        settings.FINALITY_DEPTHS = {**settings.FINALITY_DEPTHS, "Ethereum": 4}
        return chain

    yield start
    for chain in started:
        chain.stop()


def finalized(chain: TwinAnvils, node: int) -> int:
    return chain.w3s[node].eth.get_block("finalized")["number"]


def mine_until(chain: TwinAnvils, node: int, height: int) -> None:
    """Mine until `node` names `height` as its finalized block."""
    while finalized(chain, node) < height:
        chain.mine(height - finalized(chain, node))
    assert finalized(chain, node) == height


@pytest.mark.parametrize(
    ("slots", "quorum", "decisive"),
    [((8, 16), None, 1), ((8, 16, 32), 2, 1)],
    ids=["two-of-two", "two-of-three"],
)
def test_a_payment_is_final_once_the_quorum_of_endpoints_names_its_block_finalized(
    owner, nodes, settings, slots, quorum, decisive
):
    """Each node names its finalized block 16, 32 (and 64) below its head. With a quorum of 2 the
    payment is final when the second most advanced node's finalized block reaches it: not when the
    first one's does, nor at the finality depth (4), nor when the scanning endpoint alone says so."""
    chain = nodes(slots)
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": ",".join(chain.urls)}}
    settings.CHAINWATCH_QUORUM = {"Ethereum": quorum} if quorum else {}
    watch()
    draft = usdc_draft(owner, confirmations=3)
    tx = chain.pay_token(draft.receiver_address, 25_000_000)
    chain.mine()
    block = chain.w3s[0].eth.get_transaction_receipt(tx)["blockNumber"]
    chain.mine(2)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.finalized_at is None

    mine_until(chain, 0, block)  # the scanning endpoint holds it final; the quorum does not
    watch()
    draft.refresh_from_db()
    assert draft.confirmations == chain.w3s[0].eth.block_number - block + 1 > 4  # past the finality depth
    assert draft.status == DraftStatus.CONFIRMED and draft.finalized_at is None
    answers = TransferQuorum.objects.get(transfer__txid=tx).answers
    assert [(a["says"], a["final"]) for a in answers][:2] == [("agrees", True), ("agrees", False)]
    assert answers[0]["finalized"] == block and answers[1]["finalized"] < block

    mine_until(chain, decisive, block - 1)
    watch()
    draft.refresh_from_db()
    assert draft.finalized_at is None
    chain.mine()
    assert finalized(chain, decisive) == block
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.finalized_at is not None
    assert TransferQuorum.objects.get(transfer__txid=tx).agreed_final is True
    if len(slots) == 3:
        assert finalized(chain, 2) < block  # the least advanced node was not needed


def test_an_endpoint_without_the_finalized_tag_counts_the_finality_depth_beside_one_that_names_it(
    owner, nodes, settings, fake_server
):
    """A node that answers `finalized` with an error (one without the tag) holds a block final at
    FINALITY_DEPTHS below its head, as it would alone; the other node's `finalized` block still
    counts: the payment is final when both hold it so, not before."""
    chain = nodes((8, 8))
    upstream = chain.urls[1]

    def without_tag(method, path, body, headers):
        request = json.loads(body)
        items = request if isinstance(request, list) else [request]
        passed = [i for i in items if not (i["method"] == "eth_getBlockByNumber" and i["params"][0] == "finalized")]
        answers = {a["id"]: a for a in requests.post(upstream, json=passed, timeout=30).json()} if passed else {}
        unknown = {"code": -39001, "message": "Unknown block"}
        out = [answers.get(i["id"]) or {"jsonrpc": "2.0", "id": i["id"], "error": unknown} for i in items]
        return 200, out if isinstance(request, list) else out[0]

    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": f"{chain.urls[0]},{fake_server(without_tag).url}"}}
    settings.FINALITY_DEPTHS = {**settings.FINALITY_DEPTHS, "Ethereum": 30}
    watch()
    draft = usdc_draft(owner, confirmations=2)
    tx = chain.pay_token(draft.receiver_address, 25_000_000)
    chain.mine()
    block = chain.w3s[0].eth.get_transaction_receipt(tx)["blockNumber"]
    mine_until(chain, 0, block)  # 17 deep: final for the node that names it
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.finalized_at is None
    answers = TransferQuorum.objects.get(transfer__txid=tx).answers
    assert [(a["final"], a["finalized"]) for a in answers] == [(True, block), (False, None)]

    chain.mine(block + 29 - chain.w3s[0].eth.block_number - 1)  # 29 deep
    watch()
    draft.refresh_from_db()
    assert draft.confirmations == 29 and draft.finalized_at is None
    chain.mine()  # 30 deep: the tagless node's depth reached
    watch()
    draft.refresh_from_db()
    assert draft.confirmations == 30 and draft.finalized_at is not None

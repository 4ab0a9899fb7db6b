"""ETH that contracts move with internal calls (a contract wallet paying out), seen through
the node's traces on a real anvil node: through trace_filter (anvil as it is) and through
debug_traceBlockByNumber (anvil behind a proxy that refuses trace_*), and not at all
through a node that offers neither."""

from __future__ import annotations

import json

import pytest
import requests

from chainwatch.models import INTERNAL_CALL_INDEX, Cursor, ObservedTransfer
from chainwatch.tasks import watcher_run
from drafts.enums import DraftStatus
from payments.enums import Currency, Network
from tests.chainwatch import payer_contract
from tests.chainwatch.conftest import rpc_proxy
from tests.factories import make_draft
from webhooks.models import Event

pytestmark = pytest.mark.django_db

GWEI = 10**9


def watch():
    reports = watcher_run(Network.ETHEREUM, "evm")
    cursor = Cursor.objects.get(network=Network.ETHEREUM, family="evm")
    assert cursor.last_error == "", cursor.last_error
    return reports


def eth_draft(owner, node, gwei: int, **fields):
    return make_draft(
        owner, currency=Currency.ETH, receiver_address=node.new_address(), amount_base_units=gwei, **fields
    )


def events_of(draft) -> list[str]:
    return list(Event.objects.filter(draft_id=draft.id).order_by("created_at", "id").values_list("type", flat=True))


@pytest.fixture(params=["trace_filter", "debug_traceBlockByNumber"])
def traced(request, ethereum, fake_server, settings):
    """anvil offering trace_filter (it prefers that), or only debug_traceBlockByNumber."""
    if request.param == "debug_traceBlockByNumber":
        proxy = rpc_proxy(fake_server, ethereum.url, hide=("trace_",))
        settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": proxy.url}}
    ethereum.mode = request.param
    return ethereum


@pytest.fixture
def untraced(ethereum, fake_server, settings):
    """anvil behind a node that answers method-not-found for every trace method."""
    proxy = rpc_proxy(fake_server, ethereum.url, hide=("trace_", "debug_"))
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": proxy.url}}
    ethereum.proxy = proxy
    return ethereum


def test_a_contract_wallet_paying_a_native_eth_draft_through_an_internal_call_is_seen_then_confirmed(owner, traced):
    wallet = traced.deploy_wallet()
    watch()
    draft = eth_draft(owner, traced, 1_500_000_000, required_confirmations=3)  # 1.5 ETH

    tx = traced.pay_through_wallet(wallet, [(draft.receiver_address, 1_500_000_000 * GWEI, b"")])
    watch()
    draft.refresh_from_db()
    assert (draft.status, draft.paid_tx_id, draft.confirmations) == (DraftStatus.SEEN, tx, 1)

    traced.mine(2)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 3
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]
    transfer = ObservedTransfer.objects.get(txid=tx)
    assert transfer.index == INTERNAL_CALL_INDEX and transfer.receiver_address == draft.receiver_address
    assert (transfer.amount_base_units, transfer.raw_amount) == (1_500_000_000, 1_500_000_000 * GWEI)
    assert Cursor.objects.get(network="Ethereum").traces == traced.mode


def test_one_transaction_paying_two_drafts_through_internal_calls_is_two_transfers(owner, traced):
    wallet = traced.deploy_wallet()
    watch()
    first = eth_draft(owner, traced, 2_000_000, required_confirmations=1)
    second = eth_draft(owner, traced, 3_000_000, required_confirmations=1)
    stranger = traced.new_address()  # a payment in between to an address nobody watches

    tx = traced.pay_through_wallet(
        wallet,
        [
            (first.receiver_address, 2_000_000 * GWEI, b""),
            (stranger, 5 * GWEI, b""),
            (second.receiver_address, 3_000_000 * GWEI, b""),
        ],
    )
    watch()

    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.paid_tx_id) == (DraftStatus.CONFIRMED, tx)
    assert (second.status, second.paid_tx_id) == (DraftStatus.CONFIRMED, tx)
    stored = dict(ObservedTransfer.objects.filter(txid=tx).values_list("index", "receiver_address"))
    # Call order numbers every value-moving call, watched or not: the same call always gets the same index.
    assert stored == {INTERNAL_CALL_INDEX: first.receiver_address, INTERNAL_CALL_INDEX - 2: second.receiver_address}


def test_a_reverted_transaction_and_a_call_under_a_reverted_caller_pay_nothing(owner, traced):
    wallet, inner_wallet = traced.deploy_wallet(), traced.deploy_wallet()
    watch()
    draft = eth_draft(owner, traced, 1_000_000, required_confirmations=1)
    wei = 1_000_000 * GWEI

    # The wallet pays, then the whole transaction reverts.
    reverted = traced.pay_through_wallet(wallet, [(draft.receiver_address, wei, b"")], revert=True)
    # The outer wallet calls an inner one, which pays and then reverts its own frame; the
    # outer wallet ignores that failure, so the transaction succeeds but nothing reached the draft.
    inner = payer_contract.calldata([(draft.receiver_address, wei, b"")], revert=True)
    caught = traced.pay_through_wallet(wallet, [(inner_wallet, wei, inner)])
    assert traced.w3.eth.get_transaction_receipt(reverted)["status"] == 0
    assert traced.w3.eth.get_transaction_receipt(caught)["status"] == 1
    assert traced.w3.eth.get_balance(draft.receiver_address) == 0
    traced.mine(3)
    watch()

    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and events_of(draft) == []
    assert not ObservedTransfer.objects.filter(receiver_address=draft.receiver_address).exists()


def test_top_level_and_internal_payments_in_one_pass_are_each_counted_once(owner, traced):
    wallet = traced.deploy_wallet()
    watch()
    direct = eth_draft(owner, traced, 4_000_000, required_confirmations=1)
    internal = eth_draft(owner, traced, 5_000_000, required_confirmations=1)
    tx_direct = traced.pay_eth(direct.receiver_address, 4_000_000 * GWEI)
    tx_internal = traced.pay_through_wallet(wallet, [(internal.receiver_address, 5_000_000 * GWEI, b"")])
    watch()
    Cursor.objects.filter(network="Ethereum").update(height=Cursor.objects.get(network="Ethereum").height - 3)
    watch()  # the same blocks again

    direct.refresh_from_db()
    internal.refresh_from_db()
    assert (direct.status, direct.paid_tx_id) == (DraftStatus.CONFIRMED, tx_direct)
    assert (internal.status, internal.paid_tx_id) == (DraftStatus.CONFIRMED, tx_internal)
    assert ObservedTransfer.objects.filter(network="Ethereum").count() == 2
    assert events_of(internal) == ["draft.seen", "draft.confirmed"]


def test_a_node_without_traces_keeps_watching_and_healthz_says_internal_transfers_are_not_seen(
    owner, untraced, anon_client
):
    wallet = untraced.deploy_wallet()
    watch()
    direct = eth_draft(owner, untraced, 1_000_000, required_confirmations=2)
    internal = eth_draft(owner, untraced, 2_000_000, required_confirmations=2)
    untraced.pay_eth(direct.receiver_address, 1_000_000 * GWEI)
    untraced.pay_through_wallet(wallet, [(internal.receiver_address, 2_000_000 * GWEI, b"")])
    untraced.mine(2)
    watch()

    direct.refresh_from_db()
    internal.refresh_from_db()
    assert direct.status == DraftStatus.CONFIRMED
    assert internal.status == DraftStatus.PENDING  # the documented limitation, not a failure
    assert Cursor.objects.get(network="Ethereum").traces == "none"

    body = anon_client.get("/healthz").json()
    assert body["status"] == "ok" and body["checks"]["watchers"] == "ok"
    assert body["detail"]["traces"]["Ethereum"] == (
        "off: internal ETH transfers are not seen on Ethereum: the node offers no traces"
    )


def test_the_node_is_asked_about_traces_once_per_process_not_on_every_pass(owner, untraced):
    eth_draft(owner, untraced, 1_000_000)
    watch()
    untraced.mine(1)
    watch()
    untraced.mine(1)
    watch()
    asked = [m for m in untraced.proxy.methods if m.startswith(("trace_", "debug_"))]
    assert asked == ["trace_filter", "debug_traceBlockByNumber"]


def test_healthz_names_the_trace_method_of_each_evm_node(owner, traced, anon_client, settings):
    watch()
    body = anon_client.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["detail"]["traces"]["Ethereum"] == f"on ({traced.mode}): internal ETH transfers are seen"


def test_healthz_says_when_an_evm_watcher_has_not_asked_its_node_yet(anon_client, settings):
    settings.CHAINWATCH_ENDPOINTS = {"Base": {"rpc_url": "http://127.0.0.1:1"}}
    body = anon_client.get("/healthz").json()
    assert body["detail"]["traces"] == {"Base": "unknown: the watcher has not asked its node yet"}


def test_a_node_that_refuses_trace_methods_with_http_400_counts_as_offering_no_traces(
    owner, ethereum, fake_server, settings
):
    def handler(method, path, body, headers):
        payload = json.loads(body)
        items = payload if isinstance(payload, list) else [payload]
        if any(item["method"].startswith(("trace_", "debug_")) for item in items):
            return 400, {"jsonrpc": "2.0", "id": items[0]["id"], "error": {"code": -32600, "message": "unsupported"}}
        return 200, requests.post(ethereum.url, json=payload, timeout=30).json()

    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": fake_server(handler).url}}
    eth_draft(owner, ethereum, 1_000_000)
    watch()
    assert Cursor.objects.get(network="Ethereum").traces == "none"


def test_a_node_that_fails_the_trace_question_fails_the_pass_and_is_asked_again(owner, ethereum, fake_server, settings):
    failing = {"on": True}

    def handler(method, path, body, headers):
        payload = json.loads(body)
        items = payload if isinstance(payload, list) else [payload]
        if failing["on"] and any(item["method"] == "trace_filter" for item in items):
            return 503, "upstream unavailable"
        return 200, requests.post(ethereum.url, json=payload, timeout=30).json()

    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": fake_server(handler).url}}
    eth_draft(owner, ethereum, 1_000_000)
    watcher_run(Network.ETHEREUM, "evm")
    cursor = Cursor.objects.get(network="Ethereum")
    assert "trace_filter" in cursor.last_error and cursor.height is None and cursor.traces == ""

    failing["on"] = False
    watcher_run(Network.ETHEREUM, "evm")
    cursor.refresh_from_db()
    assert cursor.traces == "trace_filter" and cursor.height is not None


def test_with_fewer_new_blocks_than_receiver_chunks_a_pass_reads_each_blocks_traces_instead(
    owner, ethereum, fake_server, settings
):
    proxy = rpc_proxy(fake_server, ethereum.url, hide=())  # anvil as it is, every method asked noted
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": proxy.url}}
    settings.CHAINWATCH_ADDRESSES_PER_LOG_CALL = 1  # three receivers: three trace_filter calls a pass
    wallet = ethereum.deploy_wallet()
    drafts = [eth_draft(owner, ethereum, 1_000_000 + i, required_confirmations=1) for i in range(3)]
    watch()
    proxy.methods.clear()

    ethereum.pay_through_wallet(wallet, [(drafts[2].receiver_address, 1_000_002 * GWEI, b"")], revert=True)
    tx = ethereum.pay_through_wallet(wallet, [(drafts[1].receiver_address, 1_000_001 * GWEI, b"")])
    watch()  # two new blocks, three chunks: one trace_block per block, in one batch

    for draft in drafts:
        draft.refresh_from_db()
    assert (drafts[1].status, drafts[1].paid_tx_id) == (DraftStatus.CONFIRMED, tx)
    assert drafts[2].status == DraftStatus.PENDING  # its call was reverted: read from the same traces
    assert [m for m in proxy.methods if m.startswith(("trace_", "debug_"))] == ["trace_block", "trace_block"]


def test_a_node_that_refuses_trace_block_is_read_with_trace_filter_and_not_asked_again(
    owner, ethereum, fake_server, settings
):
    proxy = rpc_proxy(fake_server, ethereum.url, hide=("trace_block",))
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": proxy.url}}
    settings.CHAINWATCH_ADDRESSES_PER_LOG_CALL = 1
    wallet = ethereum.deploy_wallet()
    drafts = [eth_draft(owner, ethereum, 1_000_000 + i, required_confirmations=1) for i in range(3)]
    watch()
    proxy.methods.clear()

    tx = ethereum.pay_through_wallet(wallet, [(drafts[0].receiver_address, 1_000_000 * GWEI, b"")])
    watch()
    ethereum.mine(1)
    watch()

    drafts[0].refresh_from_db()
    assert (drafts[0].status, drafts[0].paid_tx_id) == (DraftStatus.CONFIRMED, tx)
    asked = [m for m in proxy.methods if m.startswith(("trace_", "debug_"))]
    assert asked == ["trace_block", *["trace_filter"] * 3, "trace_transaction", *["trace_filter"] * 3]
    assert Cursor.objects.get(network="Ethereum").last_error == ""

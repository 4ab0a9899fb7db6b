"""EVM watching against a real anvil node: token and native payments, amounts, reorgs, restarts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chainwatch.models import Cursor, ObservedTransfer
from chainwatch.tasks import chainwatch_run, watcher_pass, watcher_run
from drafts.enums import DraftStatus
from payments.enums import Currency, Network
from tests.chainwatch.conftest import rpc_proxy
from tests.concurrency import run_at_once
from tests.factories import make_draft
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def events_of(draft) -> list[str]:
    return list(Event.objects.filter(draft_id=draft.id).order_by("created_at", "id").values_list("type", flat=True))


def watch(network: str = Network.ETHEREUM):
    reports = watcher_run(network, "evm")
    cursor = Cursor.objects.get(network=network, family="evm")
    assert cursor.last_error == "", cursor.last_error
    return reports


def usdc_draft(owner, node, amount=25_000_000, **fields):
    return make_draft(
        owner,
        network=fields.pop("network", Network.ETHEREUM),
        currency=Currency.USDC,
        receiver_address=fields.pop("receiver_address", None) or node.new_address(),
        amount_base_units=amount,
        **fields,
    )


def test_an_exact_token_payment_is_seen_then_confirmed_as_blocks_are_mined(owner, ethereum):
    watch()  # the watcher starts before the payment
    draft = usdc_draft(owner, ethereum, required_confirmations=12)
    tx = ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)

    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == tx and draft.confirmations == 1

    ethereum.mine(10)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.confirmations == 11

    ethereum.mine(1)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 12
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]
    confirmed = Event.objects.get(draft_id=draft.id, type="draft.confirmed").data
    assert confirmed["txId"] == tx and confirmed["confirmations"] == 12


def test_a_draft_reaches_confirmed_through_the_beat_task_with_no_manual_step(owner, ethereum):
    draft = usdc_draft(owner, ethereum, required_confirmations=3)
    ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)
    ethereum.mine(2)

    chainwatch_run("Ethereum", "evm")

    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED


def test_an_exact_native_eth_payment_in_whole_gwei_confirms(owner, ethereum):
    watch()
    draft = make_draft(
        owner, currency=Currency.ETH, receiver_address=ethereum.new_address(), amount_base_units=1_500_000_000
    )  # 1.5 ETH in gwei
    tx = ethereum.pay_eth(draft.receiver_address, 1_500_000_000 * 10**9)
    ethereum.mine(11)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_id == tx
    transfer = ObservedTransfer.objects.get(txid=tx)
    assert transfer.amount_base_units == 1_500_000_000 and transfer.raw_amount == 1_500_000_000 * 10**9


def test_a_native_payment_that_is_not_whole_gwei_is_only_a_mismatch(owner, ethereum):
    watch()
    draft = make_draft(
        owner, currency=Currency.ETH, receiver_address=ethereum.new_address(), amount_base_units=1_000_000_000
    )
    ethereum.pay_eth(draft.receiver_address, 1_000_000_000 * 10**9 + 1)  # one wei too much
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.AMOUNT_MISMATCH


@pytest.mark.parametrize(
    ("paid", "status"),
    [
        (22_500_000, DraftStatus.AMOUNT_MISMATCH),  # 10% short, inclusive
        (27_500_000, DraftStatus.AMOUNT_MISMATCH),  # 10% over, inclusive
        (22_499_999, DraftStatus.PENDING),  # just outside: ignored
        (27_500_001, DraftStatus.PENDING),
    ],
)
def test_short_and_over_payments_are_a_mismatch_inside_ten_percent_and_ignored_outside(owner, ethereum, paid, status):
    watch()
    draft = usdc_draft(owner, ethereum)
    ethereum.pay_token(ethereum.token, draft.receiver_address, paid)
    watch()
    draft.refresh_from_db()
    assert draft.status == status
    if status == DraftStatus.AMOUNT_MISMATCH:
        assert draft.amount_mismatch["receivedBaseUnits"] == paid
        assert events_of(draft) == ["draft.amount_mismatch"]
    else:
        assert events_of(draft) == []


def test_the_right_amount_in_the_wrong_token_pays_nothing(owner, ethereum):
    watch()
    other = ethereum.deploy_token("FAKE", 6)
    draft = usdc_draft(owner, ethereum)
    ethereum.pay_token(other, draft.receiver_address, 25_000_000)
    ethereum.mine(12)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and events_of(draft) == []


def test_two_drafts_with_different_amounts_to_one_address_are_each_paid_by_their_own_transfer(owner, ethereum):
    watch()
    receiver = ethereum.new_address()
    first = usdc_draft(owner, ethereum, amount=10_000_000, receiver_address=receiver, required_confirmations=1)
    second = usdc_draft(owner, ethereum, amount=10_000_001, receiver_address=receiver, required_confirmations=1)
    tx_second = ethereum.pay_token(ethereum.token, receiver, 10_000_001)
    tx_first = ethereum.pay_token(ethereum.token, receiver, 10_000_000)
    watch()
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.paid_tx_id) == (DraftStatus.CONFIRMED, tx_first)
    assert (second.status, second.paid_tx_id) == (DraftStatus.CONFIRMED, tx_second)


def test_a_late_payment_inside_the_grace_window_moves_an_expired_draft_on(owner, ethereum):
    watch()
    draft = usdc_draft(
        owner,
        ethereum,
        status=DraftStatus.EXPIRED,
        required_confirmations=1,
        expires_at=timezone.now() - timedelta(hours=1),
        created_at=timezone.now() - timedelta(hours=2),
    )
    ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_late is True
    assert Event.objects.get(draft_id=draft.id, type="draft.seen").data["paidLate"] is True


def test_a_reorg_sends_the_draft_back_to_pending_and_the_replayed_payment_makes_it_seen_again(owner, ethereum):
    watch()
    draft = usdc_draft(owner, ethereum, required_confirmations=5)
    before = ethereum.snapshot()
    tx = ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)
    ethereum.mine(2)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.confirmations == 3

    ethereum.revert(before)  # the block with the payment is gone
    ethereum.mine(6)  # a longer branch without it
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and draft.paid_tx_id is None
    assert ObservedTransfer.objects.get(txid=tx).orphaned is True

    tx_again = ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == tx_again
    ethereum.mine(4)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert events_of(draft) == ["draft.seen", "draft.payment_reverted", "draft.seen", "draft.confirmed"]


def test_a_payment_in_an_orphaned_block_is_never_confirmed(owner, ethereum):
    watch()
    draft = usdc_draft(owner, ethereum, required_confirmations=3)
    before = ethereum.snapshot()
    ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)
    watch()
    ethereum.revert(before)
    ethereum.mine(10)  # the old branch would have had plenty of confirmations by now
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING
    assert "draft.confirmed" not in events_of(draft)


def test_a_restart_after_500_blocks_resumes_from_the_cursor_without_skipping_a_block(owner, ethereum, settings):
    settings.CHAINWATCH_LOG_BLOCKS_PER_CALL = 64
    settings.CHAINWATCH_BLOCKS_PER_PASS = 64
    watch()
    stopped_at = Cursor.objects.get(network="Ethereum").height
    token_draft = usdc_draft(owner, ethereum, required_confirmations=12)
    eth_draft = make_draft(owner, currency=Currency.ETH, receiver_address=ethereum.new_address(), amount_base_units=7)

    ethereum.mine(1)  # the watcher is down from here on
    ethereum.pay_token(ethereum.token, token_draft.receiver_address, 25_000_000)
    ethereum.mine(250)
    ethereum.pay_eth(eth_draft.receiver_address, 7 * 10**9)
    ethereum.mine(248)
    assert ethereum.head - stopped_at >= 500

    reports = watcher_run("Ethereum", "evm", max_passes=100)

    ranges = [(r.start, r.end) for r in reports]
    assert ranges[0][0] == stopped_at
    assert all(prev_end == start for (_, prev_end), (start, _) in zip(ranges, ranges[1:], strict=False))
    assert all(end - start <= 64 for start, end in ranges)
    assert Cursor.objects.get(network="Ethereum").height == ethereum.head
    token_draft.refresh_from_db()
    eth_draft.refresh_from_db()
    assert token_draft.status == DraftStatus.CONFIRMED and eth_draft.status == DraftStatus.CONFIRMED


def test_replaying_blocks_stores_each_transfer_once_and_changes_nothing(owner, ethereum):
    watch()
    start = Cursor.objects.get(network="Ethereum").height
    draft = usdc_draft(owner, ethereum, required_confirmations=1)
    ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)
    watch()
    Cursor.objects.filter(network="Ethereum").update(height=start)  # replay the same blocks
    watch()
    assert ObservedTransfer.objects.filter(network="Ethereum").count() == 1
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]


def test_a_base_payment_confirms_on_base(owner, base):
    draft = usdc_draft(owner, base, network=Network.BASE, required_confirmations=12)
    watch(Network.BASE)
    tx = base.pay_token(base.token, draft.receiver_address, 25_000_000)
    base.mine(11)
    watch(Network.BASE)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_id == tx
    assert ObservedTransfer.objects.get(txid=tx).network == "Base"


def test_a_node_that_does_not_answer_is_recorded_on_the_cursor(owner, settings):
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": "http://127.0.0.1:1"}}
    settings.CHAINWATCH_HTTP_TIMEOUT_SECONDS = 1
    watcher_run("Ethereum", "evm")
    cursor = Cursor.objects.get(network="Ethereum", family="evm")
    assert cursor.last_error and cursor.last_error_at is not None


@pytest.mark.django_db(transaction=True)
def test_two_passes_at_once_never_confirm_twice_or_emit_an_event_twice(owner, ethereum):
    draft = usdc_draft(owner, ethereum, required_confirmations=2)
    watcher_pass("Ethereum", "evm")
    ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)
    ethereum.mine(3)
    run_at_once(4, lambda: watcher_run("Ethereum", "evm"))  # raises if any pass failed
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]
    assert ObservedTransfer.objects.filter(network="Ethereum").count() == 1


def test_a_token_event_too_large_for_any_draft_does_not_stall_the_watcher(owner, ethereum):
    watch()
    draft = usdc_draft(owner, ethereum, required_confirmations=1)
    ethereum.token.functions.mint(draft.receiver_address, 2**200).transact({"from": ethereum.payer})
    ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED


def test_a_node_of_another_chain_is_refused_and_nothing_is_matched(owner, base, settings):
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": base.url}}  # a Base node set for Ethereum
    draft = usdc_draft(owner, base, required_confirmations=1)
    base.pay_token(base.token, draft.receiver_address, 25_000_000)
    watcher_run("Ethereum", "evm")
    cursor = Cursor.objects.get(network="Ethereum", family="evm")
    assert "chain id 1" in cursor.last_error and cursor.height is None
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING


def test_a_pass_asks_for_token_logs_as_often_with_more_receivers_than_one_call_holds_as_with_few(
    owner, ethereum, settings, fake_server
):
    settings.CHAINWATCH_ADDRESSES_PER_LOG_CALL = 5  # a call's receiver topics; 40 drafts would need 8 calls
    node = rpc_proxy(fake_server, ethereum.url, hide=())  # every JSON-RPC method asked at the node
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": node.url}}

    def paid_pass(drafts: int):
        opened = [usdc_draft(owner, ethereum, amount=1_000_000 + i, required_confirmations=1) for i in range(drafts)]
        watch()
        paid = opened[-1]
        tx = ethereum.pay_token(ethereum.token, paid.receiver_address, paid.amount_base_units)
        stranger = ethereum.pay_token(ethereum.token, ethereum.new_address(), 1_000_000)  # to no draft
        ethereum.mine(9)
        node.methods.clear()
        reports = watch()
        paid.refresh_from_db()
        assert paid.status == DraftStatus.CONFIRMED and paid.paid_tx_id == tx
        assert not ObservedTransfer.objects.filter(txid=stranger).exists()
        return node.methods.count("eth_getLogs"), [note for r in reports for note in r.notes]

    few_calls, few_notes = paid_pass(3)
    many_calls, many_notes = paid_pass(40)

    assert few_calls == many_calls == 1
    assert few_notes == ["token logs by receiver"] and many_notes == ["token logs by contract"]

    # A range longer than a contract's full log is read in (11 blocks, one a call here)
    # costs more by contract than by receiver (44 receivers, 9 calls): the filter wins.
    settings.CHAINWATCH_LOG_BLOCKS_PER_UNFILTERED_CALL = 1
    calls, notes = paid_pass(1)
    assert calls == 9 and notes == ["token logs by receiver"]

"""Bitcoin watching through Bitcoin Core JSON-RPC and Esplora REST (every test runs on both)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from chainwatch.models import Cursor, ObservedTransfer, UnmatchedTransfer
from chainwatch.tasks import watcher_run
from drafts.enums import DraftStatus
from fees.models import AccruedFee
from payments.enums import Currency, FeePlacement, Method, Network
from tests.factories import make_draft
from webhooks.models import Event

pytestmark = pytest.mark.django_db

RECEIVER = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
FEE_ADDRESS = "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3"


def events_of(draft) -> list[str]:
    return list(Event.objects.filter(draft_id=draft.id).order_by("created_at", "id").values_list("type", flat=True))


def watch():
    reports = watcher_run(Network.MAINNET, "bitcoin", max_passes=50)
    cursor = Cursor.objects.get(network=Network.MAINNET, family="bitcoin")
    assert cursor.last_error == "", cursor.last_error
    return reports


def btc_draft(owner, amount=250_000, **fields):
    defaults = {
        "network": Network.MAINNET,
        "currency": Currency.BTC,
        "method": Method.MULTI_OUTPUT,
        "receiver_address": RECEIVER,
        "amount_base_units": amount,
        "fee_placement": FeePlacement.OUTPUT,
        "platform_fee_address": FEE_ADDRESS,
        "fee_base_units": 1_000,
        "required_confirmations": 2,
    }
    return make_draft(owner, **{**defaults, **fields})


def test_an_exact_payment_is_seen_from_the_mempool_and_confirmed_at_two_blocks(owner, bitcoin):
    watch()
    draft = btc_draft(owner)
    txid = bitcoin.pay((RECEIVER, 250_000), (FEE_ADDRESS, 1_000))
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == txid and draft.confirmations == 0

    bitcoin.mine(1)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.confirmations == 1

    bitcoin.mine(1)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 2
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]
    assert ObservedTransfer.objects.get(txid=txid).fee_output_present is True


def test_a_multioutput_payment_without_the_fee_output_still_pays_and_records_the_missing_fee(owner, bitcoin):
    watch()
    draft = btc_draft(owner)
    txid = bitcoin.pay((RECEIVER, 250_000))
    bitcoin.mine(2)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    transfer = ObservedTransfer.objects.get(txid=txid)
    assert transfer.fee_output_present is False and transfer.draft_id == draft.id
    assert draft.fee_placement == FeePlacement.ACCRUED
    entry = AccruedFee.objects.get(draft=draft)
    assert entry.fee_base_units == 1_000 and entry.status == "Outstanding"


def test_a_multioutput_payment_with_its_fee_output_accrues_nothing(owner, bitcoin):
    watch()
    draft = btc_draft(owner)
    bitcoin.pay((RECEIVER, 250_000), (FEE_ADDRESS, 1_000))
    bitcoin.mine(2)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and not AccruedFee.objects.exists()


@pytest.mark.parametrize(
    ("paid", "status"),
    [(225_000, DraftStatus.AMOUNT_MISMATCH), (275_000, DraftStatus.AMOUNT_MISMATCH), (224_999, DraftStatus.PENDING)],
)
def test_amounts_inside_ten_percent_are_a_mismatch_and_further_off_are_ignored(owner, bitcoin, paid, status):
    watch()
    draft = btc_draft(owner)
    bitcoin.pay((RECEIVER, paid))
    bitcoin.mine(1)
    watch()
    draft.refresh_from_db()
    assert draft.status == status


def test_two_drafts_to_one_address_are_told_apart_by_their_amounts(owner, bitcoin):
    watch()
    small = btc_draft(owner, amount=100_000)
    large = btc_draft(owner, amount=100_001)
    tx_large = bitcoin.pay((RECEIVER, 100_001))
    tx_small = bitcoin.pay((RECEIVER, 100_000))
    bitcoin.mine(2)
    watch()
    small.refresh_from_db()
    large.refresh_from_db()
    assert (small.status, small.paid_tx_id) == (DraftStatus.CONFIRMED, tx_small)
    assert (large.status, large.paid_tx_id) == (DraftStatus.CONFIRMED, tx_large)


def test_a_late_payment_in_the_grace_window_is_reported_with_paid_late(owner, bitcoin):
    watch()
    draft = btc_draft(
        owner,
        status=DraftStatus.EXPIRED,
        expires_at=timezone.now() - timedelta(hours=3),
        created_at=timezone.now() - timedelta(hours=4),
    )
    bitcoin.pay((RECEIVER, 250_000))
    bitcoin.mine(2)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_late is True


def test_a_payment_in_a_block_mined_before_the_draft_was_created_pays_nothing_and_is_reported(owner, bitcoin):
    """Read only after the draft exists (the watcher's first sight of it), yet its block's time
    says it was made an hour before: it does not pay the draft, and the owner sees why. The
    payer's next payment, made after the draft, pays it. (Esplora: the status' block_time.)"""
    watch()
    hour_ago = int((timezone.now() - timedelta(hours=1)).timestamp())
    early = bitcoin.pay((RECEIVER, 250_000), (FEE_ADDRESS, 1_000))
    bitcoin.times[early] = hour_ago
    bitcoin.mine(2, at=hour_ago)  # settled: reported once at its confirmations
    draft = btc_draft(owner)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and draft.paid_tx_id is None
    report = UnmatchedTransfer.objects.get(transfer__txid=early)
    assert report.reason == "sentBeforeDraft" and report.candidate_draft_ids == [str(draft.id)]

    later = bitcoin.pay((RECEIVER, 250_000), (FEE_ADDRESS, 1_000))
    bitcoin.mine(2)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_id == later


def test_a_reorg_returns_the_draft_to_pending_and_the_payment_reappearing_makes_it_seen_again(owner, bitcoin):
    watch()
    draft = btc_draft(owner, required_confirmations=3)
    txid = bitcoin.pay((RECEIVER, 250_000))
    bitcoin.mine(2)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.confirmations == 2

    bitcoin.reorg(2, new_blocks=4)  # both blocks replaced; the payment is not in the new branch
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and draft.paid_tx_id is None
    assert ObservedTransfer.objects.get(txid=txid).orphaned is True

    bitcoin.mempool[txid] = bitcoin.find_dropped(txid)  # rebroadcast
    bitcoin.mine(1)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == txid and draft.confirmations == 1
    bitcoin.mine(2)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert events_of(draft) == ["draft.seen", "draft.payment_reverted", "draft.seen", "draft.confirmed"]


def test_a_mempool_payment_that_is_dropped_sends_the_draft_back_to_pending(owner, bitcoin):
    watch()
    draft = btc_draft(owner)
    txid = bitcoin.pay((RECEIVER, 250_000))
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN
    del bitcoin.mempool[txid]  # evicted or replaced
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING


def test_a_restart_after_hundreds_of_blocks_resumes_from_the_cursor(owner, bitcoin, settings):
    settings.CHAINWATCH_BLOCKS_PER_PASS = 50
    watch()
    stopped_at = Cursor.objects.get(network=Network.MAINNET, family="bitcoin").height
    draft = btc_draft(owner)
    bitcoin.mine(30)  # down from here
    bitcoin.pay((RECEIVER, 250_000))
    bitcoin.mine(300)

    reports = watch()

    assert reports[0].start == stopped_at
    assert all(a.end == b.start for a, b in zip(reports, reports[1:], strict=False))
    assert Cursor.objects.get(network=Network.MAINNET, family="bitcoin").height == bitcoin.height
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED


def test_replaying_blocks_stores_each_output_once_and_emits_nothing_new(owner, bitcoin):
    watch()
    start = Cursor.objects.get(network=Network.MAINNET, family="bitcoin").height
    draft = btc_draft(owner)
    bitcoin.pay((RECEIVER, 250_000), (FEE_ADDRESS, 1_000))
    bitcoin.mine(3)
    watch()
    Cursor.objects.filter(network=Network.MAINNET, family="bitcoin").update(height=start)
    watch()
    assert ObservedTransfer.objects.filter(network=Network.MAINNET).count() == 1
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]


@pytest.mark.parametrize("bitcoin", ["core"], indirect=True)
def test_core_reads_one_block_per_getblock_whatever_the_number_of_drafts(owner, bitcoin):
    watch()
    for n in range(40):
        btc_draft(owner, amount=300_000 + n, receiver_address=f"bc1qtest{n:04d}")
    before = len(bitcoin.server.bodies)
    bitcoin.mine(3)
    watch()
    bodies = bitcoin.server.bodies[before:]
    assert sum('"getblock"' in body for body in bodies) == 3  # one per new block, not per draft
    assert len(bodies) <= 8  # head, reorg check, mempool, one batch of hashes, three getblock


@pytest.mark.parametrize("bitcoin", ["core"], indirect=True)
def test_a_core_node_of_another_chain_is_refused(owner, bitcoin, settings):
    settings.CHAINWATCH_ENDPOINTS = {"Testnet": {"bitcoin_rpc_url": bitcoin.server.url}}  # a mainnet node
    watcher_run(Network.TESTNET, "bitcoin")
    cursor = Cursor.objects.get(network=Network.TESTNET, family="bitcoin")
    assert "testnet4" in cursor.last_error and cursor.height is None


@pytest.mark.parametrize(
    ("network", "chain", "receiver"),
    [
        (Network.SIGNET, "signet", "tb1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j20l03x8"),
        (Network.REGTEST, "regtest", "bcrt1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j2dkku3w"),
    ],
)
@pytest.mark.parametrize("bitcoin", ["core", "esplora"], indirect=True)
def test_a_signet_or_regtest_node_pays_a_draft_of_its_network(owner, bitcoin, settings, network, chain, receiver):
    settings.ENABLED_NETWORKS = [*settings.ENABLED_NETWORKS, network.value]
    bitcoin.core_chain = chain
    settings.CHAINWATCH_ENDPOINTS = {network.value: settings.CHAINWATCH_ENDPOINTS["Mainnet"]}
    watcher_run(network, "bitcoin")
    draft = btc_draft(owner, network=network, receiver_address=receiver, method=Method.SINGLE_OUTPUT)
    bitcoin.pay((receiver, 250_000))
    bitcoin.mine(2)

    watcher_run(network, "bitcoin", max_passes=50)

    assert Cursor.objects.get(network=network, family="bitcoin").last_error == ""
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED


@pytest.mark.parametrize("bitcoin", ["core"], indirect=True)
def test_a_regtest_watcher_refuses_a_signet_node(owner, bitcoin, settings):
    bitcoin.core_chain = "signet"
    settings.CHAINWATCH_ENDPOINTS = {"Regtest": settings.CHAINWATCH_ENDPOINTS["Mainnet"]}
    watcher_run(Network.REGTEST, "bitcoin")
    cursor = Cursor.objects.get(network=Network.REGTEST, family="bitcoin")
    assert "'regtest'" in cursor.last_error and cursor.height is None


# --- Esplora: by address or by block, whichever asks the server less ------------------------


def many_drafts(owner, count: int, *, first_amount: int = 300_000) -> list:
    """Drafts each at their own address (the first at RECEIVER): many addresses to poll."""
    return [
        btc_draft(owner, amount=first_amount + n, receiver_address=RECEIVER if n == 0 else f"bc1q{first_amount}{n:04d}")
        for n in range(count)
    ]


def esplora_pass_requests(bitcoin) -> list[str]:
    before = len(bitcoin.server.requests)
    watch()
    return [path for _, path in bitcoin.server.requests[before:]]


@pytest.mark.parametrize("bitcoin", ["esplora"], indirect=True)
def test_esplora_costs_the_same_per_pass_for_5_and_200_open_drafts(owner, bitcoin):
    def cost(count: int, amount: int) -> list[str]:
        drafts = many_drafts(owner, count, first_amount=amount)
        watch()
        bitcoin.pay((RECEIVER, amount))
        bitcoin.mine(10)
        paths = esplora_pass_requests(bitcoin)
        drafts[0].refresh_from_db()
        assert drafts[0].status == DraftStatus.CONFIRMED
        return paths

    few = cost(5, 300_000)
    many = cost(200, 400_000)  # the 5 paid drafts stay watched for reports: 205 addresses
    assert len(many) <= 2 * len(few), (few, many)
    assert not any(path.startswith("/address/") for path in many)  # read by block
    assert sum(path.startswith("/address/") for path in few) == 5  # read by address


@pytest.mark.parametrize("bitcoin", ["esplora"], indirect=True)
def test_esplora_by_block_sees_a_payment_in_the_mempool_and_confirms_it_at_two_blocks(owner, bitcoin):
    drafts = many_drafts(owner, 40)
    watch()
    txid = bitcoin.pay((RECEIVER, 300_000))
    paths = esplora_pass_requests(bitcoin)
    assert "/mempool/txids" in paths and f"/tx/{txid}" in paths
    assert not any(path.startswith("/address/") for path in paths)
    draft = drafts[0]
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.confirmations == 0

    bitcoin.mine(1)
    paths = esplora_pass_requests(bitcoin)
    assert f"/tx/{txid}" not in paths  # inspected once; the block brings it now
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.confirmations == 1
    bitcoin.mine(1)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]


@pytest.mark.parametrize("bitcoin", ["esplora"], indirect=True)
def test_esplora_by_block_pages_through_a_block_of_many_transactions(owner, bitcoin):
    drafts = many_drafts(owner, 40)
    watch()
    for n in range(60):
        bitcoin.pay((f"bc1qother{n:04d}", 1_000 + n))
    bitcoin.pay((RECEIVER, 300_000))  # the 62nd transaction of the block, on its third page
    bitcoin.mine(1)
    # As if the mempool had been seen already: the block alone must bring the payment.
    cache.set(f"chainwatch:esplora-mempool-inspected:{Network.MAINNET}", set(), timeout=60)
    paths = esplora_pass_requests(bitcoin)
    block_hash = bitcoin.blocks[-1][0]
    assert [p for p in paths if p.startswith(f"/block/{block_hash}/txs/")] == [
        f"/block/{block_hash}/txs/{start}" for start in (0, 25, 50)
    ]
    drafts[0].refresh_from_db()
    assert drafts[0].status == DraftStatus.SEEN and drafts[0].confirmations == 1


@pytest.mark.parametrize("bitcoin", ["esplora"], indirect=True)
def test_esplora_by_block_follows_a_reorg_back_to_pending(owner, bitcoin):
    drafts = many_drafts(owner, 40)
    watch()
    txid = bitcoin.pay((RECEIVER, 300_000))
    bitcoin.mine(1)
    watch()
    draft = drafts[0]
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == txid

    bitcoin.reorg(1, new_blocks=3)  # the block is replaced by a branch without the payment
    paths = esplora_pass_requests(bitcoin)
    assert not any(path.startswith("/address/") for path in paths)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and draft.paid_tx_id is None
    assert ObservedTransfer.objects.get(txid=txid).orphaned is True


@pytest.mark.parametrize("bitcoin", ["esplora"], indirect=True)
def test_esplora_by_block_notices_a_dropped_mempool_payment(owner, bitcoin):
    drafts = many_drafts(owner, 40)
    watch()
    txid = bitcoin.pay((RECEIVER, 300_000))
    watch()
    draft = drafts[0]
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN
    del bitcoin.mempool[txid]  # evicted or replaced
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING


# --- Metrics ----------------------------------------------------------------------------------


def test_watcher_passes_are_measured_and_failures_counted(owner, bitcoin, settings):
    from prometheus_client import REGISTRY

    def sample(name: str, network: str) -> float:
        return REGISTRY.get_sample_value(name, {"network": network, "family": "bitcoin"}) or 0.0

    passes = sample("chainwatch_pass_duration_seconds_count", "Mainnet")
    bitcoin.mine(2)
    watch()
    assert sample("chainwatch_pass_duration_seconds_count", "Mainnet") > passes
    assert sample("chainwatch_lag_blocks", "Mainnet") == 0  # caught up with the node's head
    assert sample("chainwatch_last_pass_timestamp_seconds", "Mainnet") > timezone.now().timestamp() - 60

    errors = sample("chainwatch_pass_errors_total", "Testnet")
    settings.CHAINWATCH_ENDPOINTS = {"Testnet": {"bitcoin_rpc_url": bitcoin.server.url}}  # a mainnet node
    watcher_run(Network.TESTNET, "bitcoin")
    assert sample("chainwatch_pass_errors_total", "Testnet") == errors + 1

"""Solana watching (by receiver or by block, matched by Solana Pay reference) against a local JSON-RPC server."""

from __future__ import annotations

import json

import pytest
from solders.keypair import Keypair

from chainwatch.models import Cursor, ObservedTransfer, UnmatchedTransfer
from chainwatch.solana import associated_token_address
from chainwatch.tasks import watcher_run
from drafts.enums import DraftStatus
from drafts.models import Draft
from payments.enums import Currency, Network
from payments.registry import get_asset
from tests.factories import make_draft
from webhooks.models import Event

pytestmark = pytest.mark.django_db

RECEIVER = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
USDC_MINT = get_asset("USDC", "Solana").token_address


def events_of(draft) -> list[str]:
    return list(Event.objects.filter(draft_id=draft.id).order_by("created_at", "id").values_list("type", flat=True))


def watch():
    watcher_run(Network.SOLANA, "solana")
    cursor = Cursor.objects.get(network=Network.SOLANA, family="solana")
    assert cursor.last_error == "", cursor.last_error
    return cursor


def sol_draft(owner, n=1, **fields):
    defaults = {
        "network": Network.SOLANA,
        "currency": Currency.SOL,
        "receiver_address": RECEIVER,
        "amount_base_units": 1_500_000_000,
        "solana_reference": f"Ref{n:040d}",
        "required_confirmations": 1,
    }
    return make_draft(owner, **{**defaults, **fields})


def test_a_sol_payment_is_seen_when_confirmed_and_confirmed_when_finalized(owner, solana):
    draft = sol_draft(owner)
    signature = solana.pay_sol(reference=draft.solana_reference, receiver=RECEIVER, lamports=1_500_000_000)
    cursor = watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == signature
    assert cursor.height == solana.slot

    solana.finalize(signature)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]


def test_an_spl_token_payment_counts_the_receivers_balance_change_of_the_mint(owner, solana):
    draft = sol_draft(owner, currency=Currency.USDC, amount_base_units=25_000_000)
    signature = solana.pay_token(reference=draft.solana_reference, receiver=RECEIVER, mint=USDC_MINT, amount=25_000_000)
    solana.finalize(signature)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert ObservedTransfer.objects.get(txid=signature).amount_base_units == 25_000_000


def test_the_right_amount_of_another_mint_pays_nothing(owner, solana):
    draft = sol_draft(owner, currency=Currency.USDC, amount_base_units=25_000_000)
    solana.pay_token(
        reference=draft.solana_reference,
        receiver=RECEIVER,
        mint="Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
        amount=25_000_000,
    )
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING


@pytest.mark.parametrize(
    ("paid", "status"),
    [
        (1_350_000_000, DraftStatus.AMOUNT_MISMATCH),
        (1_650_000_000, DraftStatus.AMOUNT_MISMATCH),
        (1_000_000_000, DraftStatus.PENDING),
    ],
)
def test_amounts_inside_ten_percent_are_a_mismatch_and_further_off_are_ignored(owner, solana, paid, status):
    draft = sol_draft(owner)
    solana.pay_sol(reference=draft.solana_reference, receiver=RECEIVER, lamports=paid)
    watch()
    draft.refresh_from_db()
    assert draft.status == status


def test_two_drafts_to_one_receiver_are_told_apart_by_their_references(owner, solana):
    first = sol_draft(owner, 1)
    second = sol_draft(owner, 2, amount_base_units=2_000_000_000)
    sig_second = solana.pay_sol(reference=second.solana_reference, receiver=RECEIVER, lamports=2_000_000_000)
    watch()
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == DraftStatus.PENDING
    assert second.status == DraftStatus.SEEN and second.paid_tx_id == sig_second


def test_a_confirmed_payment_rolled_back_before_finality_returns_the_draft_to_pending(owner, solana):
    draft = sol_draft(owner)
    signature = solana.pay_sol(reference=draft.solana_reference, receiver=RECEIVER, lamports=1_500_000_000)
    watch()
    solana.roll_back(signature)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING
    again = solana.pay_sol(reference=draft.solana_reference, receiver=RECEIVER, lamports=1_500_000_000)
    solana.finalize(again)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_id == again
    assert events_of(draft) == ["draft.seen", "draft.payment_reverted", "draft.seen", "draft.confirmed"]


def test_a_restart_finds_payments_made_while_the_watcher_was_down(owner, solana):
    watch()
    draft = sol_draft(owner)
    signature = solana.pay_sol(reference=draft.solana_reference, receiver=RECEIVER, lamports=1_500_000_000)
    solana.slot += 500_000  # hours of downtime
    solana.finalize(signature)
    cursor = watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and cursor.height == solana.slot


def test_watching_again_stores_each_signature_once_and_fetches_it_once(owner, solana):
    draft = sol_draft(owner)
    signature = solana.pay_sol(reference=draft.solana_reference, receiver=RECEIVER, lamports=1_500_000_000)
    watch()
    watch()
    solana.finalize(signature)
    watch()
    fetches = [b for b in solana.server.bodies if "getTransaction" in b]
    assert len(fetches) == 1
    assert ObservedTransfer.objects.filter(network=Network.SOLANA).count() == 1
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]


def test_a_late_payment_to_an_expired_draft_in_the_grace_window_is_reported_as_paid_late(owner, solana):
    from datetime import timedelta

    from django.utils import timezone

    draft = sol_draft(
        owner,
        status=DraftStatus.EXPIRED,
        expires_at=timezone.now() - timedelta(hours=1),
        created_at=timezone.now() - timedelta(hours=2),
    )
    signature = solana.pay_sol(reference=draft.solana_reference, receiver=RECEIVER, lamports=1_500_000_000)
    solana.finalize(signature)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_late is True


def test_an_expired_draft_past_the_grace_window_is_no_longer_paid(owner, solana, settings):
    from datetime import timedelta

    from django.utils import timezone

    settings.DRAFT_LATE_PAYMENT_GRACE_HOURS = 72
    draft = sol_draft(
        owner,
        status=DraftStatus.EXPIRED,
        expires_at=timezone.now() - timedelta(hours=73),
        created_at=timezone.now() - timedelta(hours=80),
    )
    solana.pay_sol(reference=draft.solana_reference, receiver=RECEIVER, lamports=1_500_000_000)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.EXPIRED


@pytest.mark.parametrize("way", ["by receiver", "by block"])
def test_a_payment_in_a_block_made_before_the_draft_was_created_pays_nothing_and_is_reported(owner, solana, way):
    """Its reference is the draft's, but its block's `blockTime` is an hour before the draft
    was created: it pays nothing and the owner is told why; a payment made after pays it.
    Found by listing the receiver (getTransaction's blockTime) or by reading blocks (getBlock's)."""
    from datetime import timedelta

    from django.utils import timezone

    if way == "by block":
        watch()  # the cursor exists; more receivers than new slots below
        for n in range(2, 6):
            sol_draft(owner, n, receiver_address=str(Keypair().pubkey()))
    reference = "Ref" + "7" * 40
    solana.at = int((timezone.now() - timedelta(hours=1)).timestamp())
    early = solana.pay_sol(reference=reference, receiver=RECEIVER, lamports=1_500_000_000)
    solana.at = None
    draft = sol_draft(owner, solana_reference=reference)
    since = len(solana.server.bodies)
    watch()
    assert ("getBlock" in rpc_calls(solana.server, since)) == (way == "by block")
    solana.finalize(early)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and draft.paid_tx_id is None
    report = UnmatchedTransfer.objects.get(transfer__txid=early)
    assert report.reason == "sentBeforeDraft" and report.candidate_draft_ids == [str(draft.id)]

    later = solana.pay_sol(reference=reference, receiver=RECEIVER, lamports=1_500_000_000)
    watch()
    solana.finalize(later)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_id == later


def test_a_node_of_another_cluster_is_refused(owner, solana):
    solana.genesis = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"  # devnet behind the mainnet URL
    draft = sol_draft(owner)
    solana.pay_sol(reference=draft.solana_reference, receiver=RECEIVER, lamports=1_500_000_000)
    watcher_run(Network.SOLANA, "solana")
    assert "genesis" in Cursor.objects.get(network=Network.SOLANA, family="solana").last_error
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING


# --- Cost per pass: by receiver or by block, never by draft ----------------------------------


def rpc_calls(server, since: int) -> list[str]:
    """JSON-RPC methods the node was asked since request number `since` (batches counted per call)."""
    methods = []
    for body in server.bodies[since:]:
        payload = json.loads(body)
        methods += [item["method"] for item in (payload if isinstance(payload, list) else [payload])]
    return methods


def pass_cost(owner, solana, drafts: int, *, own_receivers: bool) -> tuple[list[str], object]:
    """Watch `drafts` open drafts, pay the first, and return the methods of the next pass."""
    made = [
        sol_draft(
            owner,
            n,
            amount_base_units=1_000_000_000 + n,
            receiver_address=str(Keypair().pubkey()) if own_receivers else RECEIVER,
        )
        for n in range(drafts)
    ]
    watch()
    solana.pay_sol(reference=made[0].solana_reference, receiver=made[0].receiver_address, lamports=1_000_000_000)
    solana.slot += 10
    before = len(solana.server.bodies)
    watch()
    made[0].refresh_from_db()
    assert made[0].status == DraftStatus.SEEN
    return rpc_calls(solana.server, before), made[0]


@pytest.mark.parametrize("own_receivers", [False, True], ids=["shared-receiver", "receiver-per-draft"])
def test_a_pass_costs_the_same_for_5_and_200_open_drafts(owner, solana, own_receivers):
    few, _ = pass_cost(owner, solana, 5, own_receivers=own_receivers)
    ObservedTransfer.objects.all().delete()
    Event.objects.all().delete()
    Draft.objects.all().delete()
    many, _ = pass_cost(owner, solana, 200, own_receivers=own_receivers)
    assert len(many) <= 2 * len(few), (few, many)
    assert "getTransaction" in few or "getBlock" in few


def test_drafts_sharing_a_receiver_are_found_with_one_listing_of_that_receiver(owner, solana):
    methods, _ = pass_cost(owner, solana, 50, own_receivers=False)
    assert methods.count("getSignaturesForAddress") == 1
    assert methods.count("getTransaction") == 1


def test_with_more_receivers_than_new_slots_the_pass_reads_the_new_blocks(owner, solana):
    methods, draft = pass_cost(owner, solana, 40, own_receivers=True)
    assert "getSignaturesForAddress" not in methods
    assert methods.count("getBlock") == 11  # the payment's slot and the ten after it
    signature = draft.paid_tx_id
    solana.finalize(signature)
    watch()  # no new slot: the stored signature's status is asked
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]


def test_a_payment_read_from_a_block_and_rolled_back_returns_the_draft_to_pending(owner, solana):
    methods, draft = pass_cost(owner, solana, 40, own_receivers=True)
    assert "getBlock" in methods
    solana.roll_back(draft.paid_tx_id)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and draft.paid_tx_id is None


def test_an_spl_payment_is_listed_under_the_receivers_associated_token_account(owner, solana):
    draft = sol_draft(owner, currency=Currency.USDC, amount_base_units=25_000_000)
    solana.pay_token(reference=draft.solana_reference, receiver=RECEIVER, mint=USDC_MINT, amount=25_000_000)
    before = len(solana.server.bodies)
    watch()
    listed = [
        item["params"][0]
        for body in solana.server.bodies[before:]
        for item in (json.loads(body) if body.startswith("[") else [json.loads(body)])
        if item["method"] == "getSignaturesForAddress"
    ]
    assert listed == [associated_token_address(RECEIVER, USDC_MINT)]
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN

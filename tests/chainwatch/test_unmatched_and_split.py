"""Nothing a payer sends goes unreported: unmatched transfers, split payments, double payments,
overpayments, and attaching a transfer to a draft. Rows in, drafts door and events out."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chainwatch.matching import match_network
from chainwatch.models import ObservedTransfer, UnmatchedTransfer
from drafts.enums import DraftStatus
from notifications.emails import email_render
from notifications.models import EmailNotification
from payments.enums import Currency, Network
from tests.factories import make_draft
from webhooks.models import Event

pytestmark = pytest.mark.django_db
RECEIVER = "0x52908400098527886E0F7030069857D2E4169EE7"
USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
HEAD = 200  # far enough above block 100 that every transfer below is settled (12 confirmations)


def transfer(amount: int, *, txid: str, block: int | None = 100, **fields) -> ObservedTransfer:
    defaults = {
        "network": Network.ETHEREUM,
        "txid": txid,
        "index": 0,
        "currency": Currency.USDC,
        "token_address": USDC,
        "receiver_address": RECEIVER.lower(),
        "amount_base_units": amount,
        "block_height": block,
        "block_hash": "0xblock" if block else "",
    }
    return ObservedTransfer.objects.create(**{**defaults, **fields})


def events(type_: str) -> list[dict]:
    return [e.data for e in Event.objects.filter(type=type_).order_by("created_at")]


def test_a_transfer_far_from_every_amount_is_reported_once_with_its_candidates(owner):
    draft = make_draft(owner, amount_base_units=25_000_000)
    transfer(20_000_000, txid="0xshort")  # 20% short: no mismatch, no payment
    match_network(network=Network.ETHEREUM, head=HEAD)
    match_network(network=Network.ETHEREUM, head=HEAD + 1)  # a second pass announces nothing new
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING
    report = UnmatchedTransfer.objects.get()
    assert report.user == owner and report.candidate_draft_ids == [str(draft.id)]
    (data,) = events("transfer.unmatched")
    assert data["txId"] == "0xshort" and data["amountSats"] == 20_000_000 and data["amount"] == "20.000000"
    assert data["candidateDraftIds"] == [str(draft.id)] and data["transferId"] == str(report.id)
    (email,) = EmailNotification.objects.filter(kind="transfer_unmatched")
    subject, text, _ = email_render(email)
    assert "20.000000 USDC" in subject and "0xshort" in text and str(report.id) in text


def test_an_unsettled_transfer_is_not_reported_yet(owner):
    make_draft(owner, amount_base_units=25_000_000)
    transfer(20_000_000, txid="0xfresh", block=None)  # mempool only
    match_network(network=Network.ETHEREUM, head=HEAD)
    assert not UnmatchedTransfer.objects.exists()


def test_a_second_payment_of_a_paid_draft_is_reported_with_that_draft(owner):
    draft = make_draft(owner, required_confirmations=1)
    transfer(25_000_000, txid="0xfirst")
    transfer(25_000_000, txid="0xsecond", block=101)
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_id == "0xfirst"
    report = UnmatchedTransfer.objects.get()
    assert report.transfer.txid == "0xsecond" and report.candidate_draft_ids == [str(draft.id)]
    assert len(events("draft.confirmed")) == 1


def test_an_overpayment_within_ten_percent_is_a_mismatch_above_the_billed_amount(owner):
    draft = make_draft(owner, amount_base_units=25_000_000)
    transfer(26_000_000, txid="0xover")
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.AMOUNT_MISMATCH and draft.received_base_units == 26_000_000
    assert draft.amount_mismatch["differenceBaseUnits"] == 1_000_000
    assert not UnmatchedTransfer.objects.exists()


def test_two_parts_that_add_up_to_a_pending_draft_pay_it(owner):
    draft = make_draft(owner, amount_base_units=25_000_000, required_confirmations=12)
    transfer(15_000_000, txid="0xpart1", block=100)
    match_network(network=Network.ETHEREUM, head=105)  # first part alone: unsettled, nothing yet
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and not UnmatchedTransfer.objects.exists()
    transfer(10_000_000, txid="0xpart2", block=104)
    match_network(network=Network.ETHEREUM, head=105)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_ids == ["0xpart1", "0xpart2"]
    assert draft.confirmations == 2  # the youngest part counts
    match_network(network=Network.ETHEREUM, head=115)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.received_base_units == 25_000_000
    (confirmed,) = events("draft.confirmed")
    assert confirmed["txIds"] == ["0xpart1", "0xpart2"] and confirmed["receivedAmountSats"] == 25_000_000
    assert set(ObservedTransfer.objects.values_list("draft_id", flat=True)) == {draft.id}
    assert not UnmatchedTransfer.objects.exists()


def test_a_part_reported_unmatched_is_marked_matched_when_the_split_completes(owner):
    draft = make_draft(owner, amount_base_units=25_000_000, required_confirmations=1)
    transfer(15_000_000, txid="0xearly", block=100)
    match_network(network=Network.ETHEREUM, head=HEAD)
    report = UnmatchedTransfer.objects.get()
    transfer(10_000_000, txid="0xlate", block=190)
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    report.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert report.matched_draft_id == draft.id and report.matched_at is not None


def test_a_split_that_fits_two_drafts_is_not_guessed(owner, other_account):
    mine = make_draft(owner, amount_base_units=25_000_000)
    theirs = make_draft(other_account, amount_base_units=25_000_000)
    transfer(15_000_000, txid="0xa")
    transfer(10_000_000, txid="0xb")
    match_network(network=Network.ETHEREUM, head=HEAD)
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.status == theirs.status == DraftStatus.PENDING
    assert UnmatchedTransfer.objects.filter(user=owner).count() == 2
    assert UnmatchedTransfer.objects.filter(user=other_account).count() == 2


def test_parts_sent_before_the_draft_existed_do_not_pay_it(owner):
    transfer(15_000_000, txid="0xold1")
    transfer(10_000_000, txid="0xold2")
    draft = make_draft(owner, amount_base_units=25_000_000, created_at=timezone.now() + timedelta(seconds=1))
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING
    assert UnmatchedTransfer.objects.filter(user=owner).count() == 2


def test_a_transfer_after_the_grace_window_is_reported(owner, settings):
    settings.DRAFT_LATE_PAYMENT_GRACE_HOURS = 1
    draft = make_draft(owner, expires_at=timezone.now() - timedelta(minutes=90), status=DraftStatus.EXPIRED)
    transfer(25_000_000, txid="0xtoolate")
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.EXPIRED  # too late to pay it, but not silent:
    report = UnmatchedTransfer.objects.get()
    assert report.candidate_draft_ids == [str(draft.id)]
    settings.DRAFT_LATE_PAYMENT_GRACE_HOURS = 3
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    report.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_late  # inside the grace window: a late payment
    assert report.matched_draft_id == draft.id


def test_a_transfer_two_grace_windows_after_expiry_is_nobodys_business(owner, settings):
    settings.DRAFT_LATE_PAYMENT_GRACE_HOURS = 1
    make_draft(owner, expires_at=timezone.now() - timedelta(hours=2, minutes=1), status=DraftStatus.EXPIRED)
    transfer(25_000_000, txid="0xmuchtoolate")
    match_network(network=Network.ETHEREUM, head=HEAD)
    assert not UnmatchedTransfer.objects.exists()


def test_another_accounts_transfer_list_shows_nothing_of_mine(client_with_scopes, owner, other_account):
    make_draft(owner, amount_base_units=25_000_000)
    transfer(20_000_000, txid="0xmine")
    match_network(network=Network.ETHEREUM, head=HEAD)
    theirs = client_with_scopes("drafts:read", user=other_account).get("/api/v1/transfers").json()
    assert theirs["items"] == [] and theirs["total"] == 0


def test_the_owner_lists_unmatched_transfers_and_attaches_one_within_ten_percent(api_client, owner):
    draft = make_draft(owner, amount_base_units=25_000_000, required_confirmations=1)
    transfer(24_000_000, txid="0xnear", block=100)
    transfer(20_000_000, txid="0xfar", block=100, index=1)
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.AMOUNT_MISMATCH  # 24 of 25: within 10%
    listed = api_client.get("/api/v1/transfers?matched=false").json()
    assert [item["txId"] for item in listed["items"]] == ["0xfar"]
    assert listed["items"][0]["candidateDraftIds"] == [str(draft.id)]


def test_attaching_a_far_off_transfer_needs_accept_amount(api_client, owner):
    draft = make_draft(owner, amount_base_units=25_000_000, required_confirmations=1)
    transfer(20_000_000, txid="0xfar")
    match_network(network=Network.ETHEREUM, head=HEAD)
    report = UnmatchedTransfer.objects.get()
    url = f"/api/v1/transfers/{report.id}/attach"
    refused = api_client.post(url, {"draftId": str(draft.id)}, format="json")
    assert refused.status_code == 409 and refused.json()["errors"][0]["field"] == "acceptAmount"
    accepted = api_client.post(url, {"draftId": str(draft.id), "acceptAmount": True}, format="json")
    assert accepted.status_code == 200 and accepted.json()["status"] in ("Seen", "Confirmed")
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.received_base_units == 20_000_000
    seen = events("draft.seen")[0]
    assert seen["acceptedByOwner"] is True
    confirmed = events("draft.confirmed")[0]
    assert confirmed["receivedAmountSats"] == 20_000_000
    assert api_client.get("/api/v1/transfers?matched=true").json()["items"][0]["matchedDraftId"] == str(draft.id)
    again = api_client.post(url, {"draftId": str(draft.id)}, format="json")
    assert again.status_code == 409


def test_another_account_cannot_attach_my_transfer_or_to_my_draft(client_with_scopes, owner, other_account):
    draft = make_draft(owner, amount_base_units=25_000_000)
    transfer(20_000_000, txid="0xfar")
    match_network(network=Network.ETHEREUM, head=HEAD)
    report = UnmatchedTransfer.objects.get()
    stranger = client_with_scopes("drafts:write", user=other_account)
    response = stranger.post(f"/api/v1/transfers/{report.id}/attach", {"draftId": str(draft.id)}, format="json")
    assert response.status_code == 404


def test_a_webhook_subscribed_to_everything_does_not_get_transfer_unmatched(api_client, owner, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    everything = api_client.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/all"}, format="json").json()
    named = api_client.post(
        "/api/v1/webhooks", {"url": "http://127.0.0.1:9/u", "events": ["transfer.unmatched"]}, format="json"
    ).json()
    make_draft(owner, amount_base_units=25_000_000)
    transfer(20_000_000, txid="0xfar")
    match_network(network=Network.ETHEREUM, head=HEAD)
    event = Event.objects.get(type="transfer.unmatched")
    targets = {str(d.webhook_id) for d in event.deliveries.all()}
    assert targets == {named["id"]} and everything["id"] not in targets


def test_a_split_part_that_leaves_the_chain_frees_both_parts_until_it_comes_back(owner):
    draft = make_draft(owner, amount_base_units=25_000_000, required_confirmations=12)
    transfer(15_000_000, txid="0xearly", block=100)
    match_network(network=Network.ETHEREUM, head=HEAD)  # settled and paying nothing alone: reported
    late = transfer(10_000_000, txid="0xlate", block=195)
    match_network(network=Network.ETHEREUM, head=HEAD)
    report = UnmatchedTransfer.objects.get()
    report.refresh_from_db()
    assert report.matched_draft_id == draft.id

    ObservedTransfer.objects.filter(pk=late.pk).update(orphaned=True, block_height=None, block_hash="")  # reorg
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    report.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and draft.paid_tx_ids == []
    assert set(ObservedTransfer.objects.values_list("draft_id", flat=True)) == {None}
    assert report.matched_at is None and report.matched_draft_id is None  # unmatched again

    ObservedTransfer.objects.filter(pk=late.pk).update(orphaned=False, block_height=196, block_hash="0xother")
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    report.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_ids == ["0xearly", "0xlate"]
    assert report.matched_draft_id == draft.id
    assert [e.type for e in Event.objects.filter(draft_id=draft.id).order_by("created_at")] == [
        "draft.seen",
        "draft.payment_reverted",
        "draft.seen",
    ]


def test_the_exact_rest_of_a_short_payment_completes_the_draft_as_a_split(owner):
    draft = make_draft(owner, amount_base_units=25_000_000, required_confirmations=1)
    transfer(24_000_000, txid="0xshort", block=100)
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.AMOUNT_MISMATCH
    transfer(999_999, txid="0xnotquite", block=101)  # not the rest: stays unmatched
    transfer(1_000_000, txid="0xrest", block=102)
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_ids == ["0xshort", "0xrest"]
    assert draft.received_base_units == 25_000_000 and draft.amount_mismatch is None
    assert [r.transfer.txid for r in UnmatchedTransfer.objects.all()] == ["0xnotquite"]
    (seen,) = events("draft.seen")
    assert seen["txIds"] == ["0xshort", "0xrest"]


def test_a_rest_sent_after_the_draft_expired_does_not_complete_it(owner):
    draft = make_draft(owner, amount_base_units=25_000_000, required_confirmations=1)
    transfer(24_000_000, txid="0xshort", block=100)
    match_network(network=Network.ETHEREUM, head=HEAD)
    late = transfer(1_000_000, txid="0xrest", block=102)
    ObservedTransfer.objects.filter(pk=late.pk).update(first_seen_at=draft.expires_at + timedelta(minutes=1))
    match_network(network=Network.ETHEREUM, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.AMOUNT_MISMATCH and draft.paid_tx_ids == ["0xshort"]


def test_the_rest_of_a_short_solana_payment_completes_it_by_its_reference(owner):
    reference = "Ref1111111111111111111111111111111111111111"
    draft = make_draft(
        owner,
        network=Network.SOLANA,
        currency=Currency.SOL,
        receiver_address="So1Receiver11111111111111111111111111111111",
        solana_reference=reference,
        amount_base_units=1_000_000_000,
        required_confirmations=1,
    )
    common = {"network": Network.SOLANA, "currency": Currency.SOL, "token_address": "", "solana_reference": reference}
    transfer(950_000_000, txid="sigshort", receiver_address=draft.receiver_address, **common)
    match_network(network=Network.SOLANA, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.AMOUNT_MISMATCH
    transfer(50_000_000, txid="sigrest", block=101, receiver_address=draft.receiver_address, **common)
    match_network(network=Network.SOLANA, head=HEAD)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_ids == ["sigshort", "sigrest"]

"""Status changes go through one service that locks the row and records the event with the change."""

from datetime import timedelta

import pytest
from django.utils import timezone

from drafts import services
from drafts.enums import DraftStatus
from tests.factories import draft_payment_observed, make_draft
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def events_of(draft) -> list[str]:
    return list(Event.objects.filter(draft_id=draft.id).order_by("created_at").values_list("type", flat=True))


def test_an_exact_payment_is_seen_then_confirmed_at_the_required_count(owner):
    draft = make_draft(owner, required_confirmations=3)
    draft_payment_observed(draft_id=draft.id, tx_id="0xabc", received_base_units=25_000_000, confirmations=0)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == "0xabc"
    draft_payment_observed(draft_id=draft.id, tx_id="0xabc", received_base_units=25_000_000, confirmations=2)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.confirmations == 2
    draft_payment_observed(draft_id=draft.id, tx_id="0xabc", received_base_units=25_000_000, confirmations=3)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]
    confirmed = Event.objects.get(draft_id=draft.id, type="draft.confirmed").data
    assert confirmed["status"] == "Confirmed" and confirmed["txId"] == "0xabc" and confirmed["confirmations"] == 3
    assert confirmed["sentAmount"] == "25.000000" and confirmed["amountSats"] == 25_000_000


def test_observing_the_same_payment_twice_emits_nothing_new(owner):
    draft = make_draft(owner, required_confirmations=1)
    for _ in range(3):
        draft_payment_observed(draft_id=draft.id, tx_id="0xabc", received_base_units=25_000_000, confirmations=1)
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]


@pytest.mark.parametrize(
    ("received", "expected_status"),
    [(22_500_000, "AmountMismatch"), (27_500_000, "AmountMismatch"), (22_499_999, "Pending"), (27_500_001, "Pending")],
)
def test_the_ten_percent_window_is_inclusive(owner, received, expected_status):
    draft = make_draft(owner)
    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=received, confirmations=0)
    draft.refresh_from_db()
    assert draft.status == expected_status


def test_accepting_a_short_payment_sends_seen_with_accepted_by_owner_then_confirms(owner):
    draft = make_draft(owner, required_confirmations=2)
    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=24_000_000, confirmations=0)
    services.draft_accept_received(draft=draft)
    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=24_000_000, confirmations=2)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert events_of(draft) == ["draft.amount_mismatch", "draft.seen", "draft.confirmed"]
    seen = Event.objects.get(draft_id=draft.id, type="draft.seen").data
    assert seen["acceptedByOwner"] is True
    confirmed = Event.objects.get(draft_id=draft.id, type="draft.confirmed").data
    assert confirmed["receivedAmountSats"] == 24_000_000 and confirmed["receivedAmount"] == "24.000000"


def test_a_reorged_payment_returns_the_draft_to_pending_and_can_be_seen_again(owner):
    draft = make_draft(owner, required_confirmations=12)
    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=25_000_000, confirmations=1)
    vanished = services.PaymentObservation(tx_id="0x1", received_base_units=25_000_000, vanished=True)
    services.draft_payment_apply(draft_id=draft.id, observation=vanished)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and draft.paid_tx_id is None
    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=25_000_000, confirmations=1)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN


def test_a_late_payment_moves_an_expired_draft_on_and_says_so(owner):
    draft = make_draft(owner, expires_at=timezone.now() - timedelta(hours=1), required_confirmations=1)
    assert services.draft_expire(draft_id=draft.id) is not None
    draft_payment_observed(draft_id=draft.id, tx_id="0x9", received_base_units=25_000_000, confirmations=1)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_late
    assert events_of(draft) == ["draft.expired", "draft.seen", "draft.confirmed"]
    assert Event.objects.get(draft_id=draft.id, type="draft.confirmed").data["paidLate"] is True


def test_expiring_twice_or_too_early_does_nothing(owner):
    early = make_draft(owner)
    assert services.draft_expire(draft_id=early.id) is None
    late = make_draft(owner, amount_base_units=1, expires_at=timezone.now() - timedelta(seconds=1))
    services.draft_expire(draft_id=late.id)
    assert services.draft_expire(draft_id=late.id) is None
    assert events_of(late) == ["draft.expired"]


def test_a_confirmed_draft_cannot_be_cancelled(owner):
    draft = make_draft(owner, required_confirmations=0)
    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=25_000_000, confirmations=0)
    with pytest.raises(services.TransitionNotAllowed):
        services.draft_cancel(draft=draft)


@pytest.mark.django_db(transaction=True)
def test_the_outbox_refuses_an_event_written_outside_a_transaction(owner):
    from webhooks.services import event_record

    with pytest.raises(RuntimeError):
        event_record(user=owner, type="test", data={})

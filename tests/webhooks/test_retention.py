"""Retention: what is past its age goes in bounded batches, younger rows and rows still needed stay."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from chainwatch.models import ObservedTransfer, UnmatchedTransfer
from chainwatch.retention import unmatched_purge
from drafts.idempotency import purge_expired
from drafts.models import IdempotencyKey
from webhooks.models import AttemptState, Delivery, DeliveryAttempt, DeliveryStatus, Event, Webhook
from webhooks.retention import outbox_purge

pytestmark = pytest.mark.django_db

NOW = timezone.now()


def ago(days: float):
    return NOW - timedelta(days=days)


def event(owner, days: float) -> Event:
    return Event.objects.create(user=owner, type="draft.created", data={"days": days}, created_at=ago(days))


def delivery(webhook: Webhook, ev: Event, days: float, status: str = DeliveryStatus.SUCCEEDED) -> Delivery:
    made = Delivery.objects.create(webhook=webhook, event=ev, status=status, created_at=ago(days))
    DeliveryAttempt.objects.create(delivery=made, number=1, state=AttemptState.DONE, claimed_at=ago(days))
    return made


@pytest.fixture
def webhook(owner) -> Webhook:
    return Webhook.objects.create(user=owner, url="https://hooks.example.com/in", secret="whsec_test")


def test_each_outbox_kind_past_its_age_goes_and_younger_rows_stay(owner, webhook, settings):
    settings.EVENTS_RETENTION_DAYS = 30
    settings.WEBHOOKS_DELIVERY_RETENTION_DAYS = 20
    settings.WEBHOOKS_DELIVERY_ATTEMPT_RETENTION_DAYS = 10
    old_event, young_event = event(owner, 31), event(owner, 29)
    old_delivery = delivery(webhook, young_event, 21)  # its event stays, the delivery goes
    other = Webhook.objects.create(user=owner, url="https://hooks.example.com/two", secret="whsec_two")
    mid_delivery = delivery(other, young_event, 15)  # stays, but its attempt (15 days) goes
    young_attempt = DeliveryAttempt.objects.create(
        delivery=mid_delivery, number=2, state=AttemptState.DONE, claimed_at=ago(5)
    )

    reports = outbox_purge(now=NOW)

    assert {kind: r.deleted for kind, r in reports.items()} == {"attempts": 2, "deliveries": 1, "events": 1}
    assert not Event.objects.filter(pk=old_event.pk).exists()
    assert Event.objects.filter(pk=young_event.pk).exists()
    assert not Delivery.objects.filter(pk=old_delivery.pk).exists()
    assert list(Delivery.objects.values_list("pk", flat=True)) == [mid_delivery.pk]
    assert list(DeliveryAttempt.objects.values_list("pk", flat=True)) == [young_attempt.pk]


def test_a_pending_delivery_keeps_its_event_and_its_attempts(owner, webhook, settings):
    settings.EVENTS_RETENTION_DAYS = 30
    settings.WEBHOOKS_DELIVERY_RETENTION_DAYS = 30
    settings.WEBHOOKS_DELIVERY_ATTEMPT_RETENTION_DAYS = 15
    kept = event(owner, 45)
    pending = delivery(webhook, kept, 45, status=DeliveryStatus.PENDING)
    finished_elsewhere = Webhook.objects.create(user=owner, url="https://hooks.example.com/b", secret="whsec_b")
    delivery(finished_elsewhere, kept, 45)  # finished: goes by its own age, the event still stays

    outbox_purge(now=NOW)

    assert Event.objects.filter(pk=kept.pk).exists()
    assert list(Delivery.objects.values_list("pk", flat=True)) == [pending.pk]
    assert DeliveryAttempt.objects.filter(delivery=pending).count() == 1

    Delivery.objects.filter(pk=pending.pk).update(status=DeliveryStatus.FAILED)  # given up: now it may go
    outbox_purge(now=NOW)
    assert not Event.objects.exists()
    assert not Delivery.objects.exists()


def test_an_event_goes_with_its_finished_deliveries(owner, webhook, settings):
    settings.EVENTS_RETENTION_DAYS = 30
    settings.WEBHOOKS_DELIVERY_RETENTION_DAYS = 60  # longer than the event: it cannot outlive it
    old = event(owner, 31)
    delivery(webhook, old, 31)
    outbox_purge(now=NOW)
    assert not Event.objects.exists() and not Delivery.objects.exists() and not DeliveryAttempt.objects.exists()


def test_batches_are_bounded_by_a_limited_locking_select(owner, settings):
    settings.EVENTS_RETENTION_DAYS = 30
    Event.objects.bulk_create(
        Event(user=owner, type="draft.created", data={}, created_at=ago(40 + i)) for i in range(23)
    )
    event(owner, 1)
    with CaptureQueriesContext(connection) as queries:
        report = outbox_purge(now=NOW, batch=5)["events"]
    assert (report.deleted, report.batch_sizes) == (23, [5, 5, 5, 5, 3])
    locks = [q["sql"] for q in queries if "SKIP LOCKED" in q["sql"] and 'FROM "webhooks_event"' in q["sql"]]
    assert len(locks) == 5 and all("LIMIT 5" in sql for sql in locks)  # the short fifth batch ends the run
    assert Event.objects.count() == 1


def test_the_purge_pauses_after_each_full_batch_in_proportion_to_its_time(owner, settings):
    """Creations beside the purge keep their latency: after each batch the purge waits
    RETENTION_PURGE_PAUSE_RATIO times as long as the batch took (not after the last, short one)."""
    settings.EVENTS_RETENTION_DAYS = 30
    settings.RETENTION_PURGE_PAUSE_RATIO = 3
    Event.objects.bulk_create(Event(user=owner, type="draft.created", data={}, created_at=ago(40)) for _ in range(12))
    started = time.monotonic()
    report = outbox_purge(now=NOW, batch=5)["events"]
    took = time.monotonic() - started
    assert report.batch_sizes == [5, 5, 2]
    assert report.paused_seconds > 0 and took >= report.paused_seconds
    assert report.paused_seconds <= 3 * 2 * report.longest_batch_seconds + 1e-9  # two pauses, none after the last
    settings.RETENTION_PURGE_PAUSE_RATIO = 0
    Event.objects.bulk_create(Event(user=owner, type="draft.created", data={}, created_at=ago(40)) for _ in range(12))
    assert outbox_purge(now=NOW, batch=5)["events"].paused_seconds == 0


def test_a_run_stops_after_its_batch_limit_and_the_next_goes_on(owner, settings):
    settings.EVENTS_RETENTION_DAYS = 30
    Event.objects.bulk_create(Event(user=owner, type="draft.created", data={}, created_at=ago(40)) for _ in range(12))
    assert outbox_purge(now=NOW, batch=5, max_batches=2)["events"].deleted == 10
    assert outbox_purge(now=NOW, batch=5, max_batches=2)["events"].deleted == 2


def transfer(n: int) -> ObservedTransfer:
    return ObservedTransfer.objects.create(
        network="Ethereum", txid=f"0x{n:064x}", index=0, currency="USDC", receiver_address="0xabc", amount_base_units=n
    )


def test_unmatched_transfers_past_their_age_go_but_never_inside_the_reservation_window(owner, settings):
    settings.UNMATCHED_TRANSFERS_RETENTION_DAYS = 90
    settings.AMOUNT_RESERVATION_DAYS = 7
    settings.DRAFT_LATE_PAYMENT_GRACE_HOURS = 72
    old = UnmatchedTransfer.objects.create(user=owner, transfer=transfer(1), created_at=ago(91))
    young = UnmatchedTransfer.objects.create(user=owner, transfer=transfer(2), created_at=ago(89))
    assert unmatched_purge(now=NOW).deleted == 1
    assert list(UnmatchedTransfer.objects.values_list("pk", flat=True)) == [young.pk]
    assert ObservedTransfer.objects.filter(pk=old.transfer_id).exists()  # the chain record stays

    settings.UNMATCHED_TRANSFERS_RETENTION_DAYS = 1  # shorter than reservation (7 d) + grace (3 d)
    UnmatchedTransfer.objects.create(user=owner, transfer=transfer(3), created_at=ago(9))
    assert unmatched_purge(now=NOW).deleted == 1  # only the 89-day one; the 9-day one is still needed
    assert UnmatchedTransfer.objects.get().created_at == ago(9)


def test_idempotency_records_past_their_ttl_go_in_batches(owner, settings):
    settings.IDEMPOTENCY_KEY_TTL_HOURS = 24
    for i, hours in enumerate((25, 30, 48, 23, 1)):
        made = NOW - timedelta(hours=hours)
        IdempotencyKey.objects.create(user=owner, key=f"k{i}", request_hash="h", created_at=made)
    assert purge_expired(now=NOW, batch=2) == 3
    assert sorted(IdempotencyKey.objects.values_list("key", flat=True)) == ["k3", "k4"]


def test_the_beat_runs_the_purges(settings):
    assert settings.CELERY_BEAT_SCHEDULE["retention-webhooks"]["task"] == "webhooks.purge"
    assert settings.CELERY_BEAT_SCHEDULE["retention-unmatched-transfers"]["task"] == "chainwatch.purge_unmatched"
    assert settings.CELERY_BEAT_SCHEDULE["drafts-idempotency-cleanup"]["task"] == "drafts.purge_idempotency_keys"

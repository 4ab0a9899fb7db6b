"""What a delivery's outcome does to its endpoint: disabled after failures, reset by a success,
stopped on delete; events roll back with their change; attempts counted."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from notifications.models import EmailNotification
from notifications.services import emails_send_due
from tests.webhooks.conftest import deliver_due, record
from webhooks import endpoints, services
from webhooks.models import Delivery, EventType

pytestmark = pytest.mark.django_db

START = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)  # in the past, so rows stay due afterwards


def test_an_endpoint_failing_deliveries_in_a_row_is_disabled_and_its_owner_emailed(
    make_webhook, receiver, owner, settings, api_client
):
    settings.WEBHOOKS_DISABLE_AFTER_FAILED_DELIVERIES = 2
    receiver.status = 500
    webhook = make_webhook(receiver.url)
    with time_machine.travel(START, tick=False) as clock:
        record(owner, EventType.DRAFT_SEEN, {"draftId": "a"})
        record(owner, EventType.DRAFT_SEEN, {"draftId": "b"})
        for _ in range(20):  # a failing endpoint gets one attempt in flight, so the two take turns
            deliver_due()
            clock.shift(timedelta(minutes=65))
        record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "c"})  # kept while disabled
        assert deliver_due() == []
        emails_send_due()

    webhook.refresh_from_db()
    assert webhook.active is False
    assert "2 deliveries in a row failed" in webhook.disabled_reason
    [notice] = [m for m in mail.outbox if m.subject == "Webhook endpoint disabled"]
    assert webhook.url in notice.body and notice.to == [owner.email]

    receiver.status = 200
    response = api_client.patch(f"/api/v1/webhooks/{webhook.id}", {"active": True}, format="json")
    deliver_due()
    assert response.json()["active"] is True
    assert Delivery.objects.get(event__data__draftId="c").status == "Succeeded"


def test_a_success_resets_the_failure_count(make_webhook, receiver, owner, settings):
    receiver.statuses = [500] * 8
    webhook = make_webhook(receiver.url)
    with time_machine.travel(START, tick=False) as clock:
        record(owner, EventType.DRAFT_SEEN, {"draftId": "a"})
        for _ in range(9):
            deliver_due()
            clock.shift(timedelta(minutes=65))
        webhook.refresh_from_db()
        assert webhook.consecutive_failures == 1
        record(owner, EventType.DRAFT_SEEN, {"draftId": "b"})
        deliver_due()

    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 0 and webhook.last_failure_at is None


def test_deleting_an_endpoint_stops_its_pending_deliveries(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    record(owner, EventType.DRAFT_SEEN, {"draftId": "a"})

    endpoints.webhook_delete(webhook=webhook)

    assert deliver_due() == []
    assert receiver.requests == []


@pytest.mark.django_db(transaction=True)
def test_recording_an_event_outside_a_transaction_is_refused(owner):
    with pytest.raises(RuntimeError):
        services.event_record(user=owner, type=EventType.DRAFT_SEEN, data={})


def test_an_event_and_its_deliveries_roll_back_with_the_change(make_webhook, receiver, owner):
    from django.db import transaction

    make_webhook(receiver.url)
    with pytest.raises(ZeroDivisionError), transaction.atomic():
        services.event_record(user=owner, type=EventType.DRAFT_SEEN, data={"draftId": str(uuid.uuid4())})
        1 / 0  # noqa: B018

    assert not Delivery.objects.exists()
    assert not EmailNotification.objects.exists()


def test_delivery_attempts_are_counted_by_outcome_with_their_latency(make_webhook, make_receiver, owner, loopback):
    from prometheus_client import REGISTRY

    def count(outcome: str) -> float:
        return REGISTRY.get_sample_value("webhook_deliveries_total", {"outcome": outcome}) or 0.0

    before = {outcome: count(outcome) for outcome in ("succeeded", "refused")}
    timed = REGISTRY.get_sample_value("webhook_delivery_duration_seconds_count") or 0.0
    make_webhook(make_receiver(statuses=[500]).url)
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d-metrics"})
    deliver_due()  # answered 500
    Delivery.objects.update(next_attempt_at=timezone.now())
    deliver_due()  # answered 200

    assert count("refused") == before["refused"] + 1
    assert count("succeeded") == before["succeeded"] + 1
    assert REGISTRY.get_sample_value("webhook_delivery_duration_seconds_count") == timed + 2

"""The outbox survives a broker that is down when the change commits."""

from __future__ import annotations

import pytest
from django.db import transaction

from notifications import tasks as email_tasks
from notifications.models import EmailNotification
from notifications.services import emails_send_due
from tests.factories import draft_payment_observed, make_draft
from tests.webhooks.conftest import deliver_all_due
from webhooks import attempts as webhook_attempts
from webhooks import endpoints, services, tasks
from webhooks.models import Delivery


@pytest.fixture
def broker_down(monkeypatch):
    """Every enqueue fails as it does when Redis is unreachable (a test double for the broker)."""
    sent = []

    def unreachable(*args, **kwargs):
        sent.append(args)
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    for task in (tasks.dispatch_due, tasks.deliver, email_tasks.send_email):
        monkeypatch.setattr(task, "delay", unreachable)
    return sent


@pytest.mark.django_db(transaction=True)  # enqueued on commit
def test_a_state_change_commits_while_the_broker_is_down_and_the_tick_delivers_later(
    broker_down, make_webhook, receiver, owner, caplog
):
    make_webhook(receiver.url)
    draft = make_draft(owner)

    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=25_000_000, confirmations=12)

    assert broker_down, "the change tried to enqueue after commit"
    assert "the beat tick will pick it up" in caplog.text
    assert Delivery.objects.filter(status="Pending").count() == 2
    assert EmailNotification.objects.filter(status="Pending").count() == 2
    # The broker is back: the beat tick finds everything in PostgreSQL.
    deliver_all_due()
    emails_send_due()
    assert [r.headers["X-Service-Event"] for r in receiver.requests] == ["draft.seen", "draft.confirmed"]
    assert set(EmailNotification.objects.values_list("status", flat=True)) == {"Sent"}


@pytest.mark.django_db(transaction=True)  # enqueued on commit
def test_a_batch_of_events_in_one_transaction_enqueues_one_dispatch_per_endpoint(
    broker_down, make_webhook, receiver, owner
):
    first, second = make_webhook(receiver.url), make_webhook(receiver.url)

    with transaction.atomic():
        for n in range(5):
            services.event_record(user=owner, type="draft.created", data={"draftId": str(n)})

    assert sorted(broker_down) == sorted([(str(first.id),), (str(second.id),)])


@pytest.mark.django_db(transaction=True)  # enqueued on commit
def test_a_payment_seen_sends_its_endpoints_dispatch_as_work_no_running_tick_can_hold_up(
    broker_down, make_webhook, receiver, owner
):
    from config.celery import scheduled_work

    webhook = make_webhook(receiver.url)
    draft = make_draft(owner)

    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=25_000_000, confirmations=1)

    # Sent on commit, scoped to the endpoint: not the beat entry's work, so never skipped
    # while the dispatcher tick holds its lease.
    dispatches = [args for args in broker_down if not EmailNotification.objects.filter(id__in=args).exists()]
    assert dispatches == [(str(webhook.id),)]
    assert scheduled_work("webhooks.dispatch_due", (str(webhook.id),), {}) is None


def test_the_beat_ticks_are_named_entries_for_registered_tasks(settings):
    from config.celery import app

    schedule = settings.CELERY_BEAT_SCHEDULE
    assert schedule["webhooks-dispatch-due"]["task"] == "webhooks.dispatch_due"
    assert schedule["notifications-send-due-emails"]["task"] == "notifications.send_due_emails"
    app.loader.import_default_modules()
    assert {
        "webhooks.dispatch_due",
        "webhooks.deliver",
        "notifications.send_email",
        "notifications.send_due_emails",
    } <= set(app.tasks)


@pytest.mark.django_db
def test_deleting_an_endpoint_while_its_attempt_is_claimed_is_harmless(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    with transaction.atomic():
        services.event_record(user=owner, type="draft.seen", data={"draftId": "d"})
    [attempt_id] = services.deliveries_dispatch(enqueue=False)

    endpoints.webhook_delete(webhook=webhook)

    assert webhook_attempts.delivery_attempt(attempt_id=attempt_id) is None
    assert receiver.requests == []

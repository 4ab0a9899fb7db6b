"""Moving the email outbox out of webhooks keeps every row: pending emails still go out."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("webhooks", "0002_notificationpreference_webhook_delivery_and_more"), ("notifications", None)]
AFTER = [("webhooks", "0003_email_moves_to_notifications"), ("notifications", "0002_copy_webhooks_emails")]


@pytest.fixture(autouse=True)
def _back_to_the_latest_migrations():
    """Later migrations of these apps must be there again for the tests that follow."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([t for t in targets if t[1] is not None]).apps


@pytest.mark.slow
def test_the_move_copies_outbox_rows_and_keeps_preferences():
    from accounts.models import User

    # Made with today's model: the accounts table keeps its later columns while webhooks steps back.
    user_id = User.objects.create_user("owner@example.com").pk
    old = _migrate(BEFORE)
    try:
        user = old.get_model("accounts", "User").objects.get(pk=user_id)
        event = old.get_model("webhooks", "Event").objects.create(
            user=user, type="draft.confirmed", data={"draftId": "d-1", "status": "Confirmed"}
        )
        Email = old.get_model("webhooks", "EmailNotification")
        pending = Email.objects.create(id=uuid.uuid4(), user=user, kind="draft_event", event=event)
        sent = Email.objects.create(
            id=uuid.uuid4(), user=user, kind="webhook_disabled", context={"url": "https://x"}, status="Sent"
        )
        old.get_model("webhooks", "NotificationPreference").objects.create(user=user, email_enabled=False)
    finally:
        new = _migrate(AFTER)

    rows = {row.id: row for row in new.get_model("notifications", "EmailNotification").objects.all()}
    assert rows[pending.id].to == "owner@example.com" and rows[pending.id].status == "Pending"
    assert rows[pending.id].context == {"event": "draft.confirmed", "data": {"draftId": "d-1", "status": "Confirmed"}}
    assert rows[pending.id].dedup_key == f"event:{event.id}"
    assert rows[sent.id].status == "Sent" and rows[sent.id].context == {"url": "https://x"}
    assert new.get_model("notifications", "NotificationPreference").objects.get(user_id=user.id).email_enabled is False

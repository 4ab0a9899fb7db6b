"""Dispatch nudges coalesce (webhooks/nudges.py): however many changes commit, at most one
`webhooks.dispatch_due` per endpoint waits in the queue; once it starts, the next change sends
the next one."""

from __future__ import annotations

import base64
import json

import pytest
import redis
from django.conf import settings

from config.celery import app as celery_app
from tests.webhooks.conftest import record
from webhooks import tasks
from webhooks.models import Delivery, EventType

pytestmark = pytest.mark.django_db(transaction=True)  # nudges are sent on commit


def _waiting_nudges() -> list[tuple]:
    """The dispatch_due messages waiting in this run's queue (Redis), as their arguments."""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("global_keyprefix", "")
    found = []
    for raw in client.lrange(f"{prefix}celery", 0, -1):
        message = json.loads(raw)
        if message["headers"]["task"] == "webhooks.dispatch_due":
            body = json.loads(base64.b64decode(message["body"]))
            found.append(tuple(body[0]))
    return found


def test_many_changes_enqueue_one_waiting_nudge_per_endpoint_and_the_next_after_it_starts(
    make_webhook, receiver, owner
):
    first, second = make_webhook(receiver.url), make_webhook(receiver.url)
    celery_app.control.purge()

    for n in range(50):  # 50 drafts changing, each in a transaction of its own
        record(owner, EventType.DRAFT_CONFIRMED, {"draftId": f"d-{n}", "status": "Confirmed"})

    assert Delivery.objects.count() == 100
    assert sorted(_waiting_nudges()) == sorted([(str(first.id),), (str(second.id),)])

    # The first endpoint's nudge starts (a worker takes it): a change after that sends another
    celery_app.control.purge()
    tasks.dispatch_due.apply(args=[str(first.id)])
    for n in range(10):
        record(owner, EventType.DRAFT_CONFIRMED, {"draftId": f"e-{n}", "status": "Confirmed"})
    assert _waiting_nudges() == [(str(first.id),)]

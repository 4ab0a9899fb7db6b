"""Slow tenants do not delay a healthy one: one dispatcher pass (webhooks/passes.py) waits on
20 other accounts' endpoints that answer seconds late while it delivers a healthy endpoint's
events promptly, one worker process, real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from django.db import connection

from tests.webhooks.conftest import record
from webhooks import endpoints, passes
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, EventType

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SLOW_SECONDS = 4.0


class PassThread(threading.Thread):
    """One pass in the background, as a worker process runs it (its own database connection)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(daemon=True)
        self.seconds = seconds
        self.report: passes.PassReport | None = None

    def run(self) -> None:
        try:
            self.report = passes.pass_run(seconds=self.seconds)
        finally:
            connection.close()


@pytest.fixture(autouse=True)
def _fresh_memory():
    passes._seen.clear()
    yield
    passes._seen.clear()


def _users(n: int):
    from accounts.models import User

    return [
        User.objects.create_user(f"tenant-{k}-{uuid.uuid4().hex[:6]}@example.com", uuid.uuid4().hex) for k in range(n)
    ]


def test_a_healthy_endpoint_is_served_within_a_second_while_twenty_slow_tenants_are_in_flight(
    owner, make_receiver, loopback
):
    # Given 20 endpoints of other accounts that answer after 4 s, each owed an event
    slow = [make_receiver(delay=SLOW_SECONDS, keep_alive=True) for _ in range(20)]
    for tenant, receiver in zip(_users(20), slow, strict=True):
        endpoints.webhook_create(user=tenant, url=receiver.url, events=None)
        record(tenant, EventType.DRAFT_SEEN, {"draftId": str(uuid.uuid4())})
    healthy = make_receiver(keep_alive=True)
    endpoints.webhook_create(user=owner, url=healthy.url, events=None)
    worker = PassThread(seconds=3 * SLOW_SECONDS)
    worker.start()
    # and the pass has all 20 of them in flight
    for receiver in slow:
        assert receiver.wait_for(1, timeout=10)
    in_flight_since = time.monotonic()

    # When the healthy endpoint's account records events meanwhile
    delays = []
    for n in range(3):
        recorded = time.monotonic()
        record(owner, EventType.DRAFT_SEEN, {"draftId": str(uuid.uuid4())})
        assert healthy.wait_for(n + 1, timeout=2 * SLOW_SECONDS)
        delays.append(time.monotonic() - recorded)
    slow_delivered = Delivery.objects.filter(status=DeliveryStatus.SUCCEEDED).exclude(webhook__user=owner).count()

    # Then each arrives within a second, long before the slow endpoints answer
    assert max(delays) < 1.0, delays
    assert time.monotonic() - in_flight_since < SLOW_SECONDS, "the slow endpoints answered first"
    assert slow_delivered == 0  # every slow request was still open while the healthy ones went out
    worker.join(timeout=4 * SLOW_SECONDS)
    assert not worker.is_alive()
    # and the slow endpoints' deliveries succeed too, each POSTed once, recorded in the database
    assert Delivery.objects.filter(status=DeliveryStatus.SUCCEEDED).count() == 23
    assert DeliveryAttempt.objects.count() == 23
    assert all(len(receiver.requests) == 1 for receiver in slow)
    assert worker.report is not None and worker.report.most_in_flight >= 21


def test_an_endpoint_that_timed_out_gets_the_shorter_time_out_and_one_slot(owner, make_receiver, loopback, settings):
    # Given an endpoint that holds every request past the time-out
    settings.WEBHOOKS_TIMEOUT_SECONDS = 3
    settings.WEBHOOKS_SLOW_TIMEOUT_SECONDS = 1
    receiver = make_receiver(hold=True)
    webhook = endpoints.webhook_create(user=owner, url=receiver.url, events=None)
    record(owner, EventType.DRAFT_SEEN, {"draftId": str(uuid.uuid4())})
    # When a pass sends its delivery and it times out
    passes.pass_run(seconds=1)
    [first] = DeliveryAttempt.objects.all()
    assert "No answer within 3 seconds" in first.error
    # Then the endpoint is slow in this process, and its next attempt waits 1 s, not 3
    assert passes.endpoint_slow(webhook.id)
    assert passes.endpoint_timeout(webhook.id) == 1.0
    Delivery.objects.update(next_attempt_at=first.claimed_at)  # its retry is due
    started = time.monotonic()
    passes.pass_run(seconds=1)
    assert time.monotonic() - started < 2.5
    second = DeliveryAttempt.objects.get(number=2)
    assert "No answer within 1 seconds" in second.error
    # and a quick answer clears it
    receiver.hold = False
    receiver.release.set()
    Delivery.objects.update(next_attempt_at=first.claimed_at)
    passes.pass_run(seconds=1)
    assert Delivery.objects.get().status == DeliveryStatus.SUCCEEDED
    assert not passes.endpoint_slow(webhook.id)
    assert passes.endpoint_timeout(webhook.id) == 3.0

"""A delivery task's lane: it leases its endpoint's due deliveries a batch at a time and
makes them in turn. Leases never overlap, a lane that dies loses nothing and spends no
attempt, a lane whose lease ran out sends nothing, and every attempt is logged."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from tests.concurrency import run_at_once
from tests.webhooks.conftest import deliver_due, record
from webhooks import attempts as webhook_attempts
from webhooks import endpoints, lanes, services, signing
from webhooks.models import AttemptState, Delivery, DeliveryAttempt, DeliveryStatus, EventType

START = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)  # in the past, so rows stay due afterwards


def _events(owner, count: int) -> None:
    for n in range(count):
        record(owner, EventType.DRAFT_SEEN, {"draftId": f"d{n}"})


@pytest.mark.django_db(transaction=True)
def test_two_lanes_leasing_at_once_get_disjoint_batches(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    _events(owner, 30)

    batches = run_at_once(2, lambda: lanes.deliveries_lease(webhook_id=webhook.id, limit=20))

    # However the two interleave, each due delivery is leased by exactly one of them.
    leased = [item.delivery_id for batch in batches for item in batch]
    assert all(len(batch) <= 20 for batch in batches)
    assert len(leased) == len(set(leased)) == 30


@pytest.mark.django_db(transaction=True)
def test_two_lanes_of_one_endpoint_post_each_delivery_exactly_once_and_log_every_attempt(
    make_webhook, receiver, owner, settings
):
    settings.WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT = 2
    webhook = make_webhook(receiver.url)
    _events(owner, 45)
    first, second = services.deliveries_dispatch(webhook_id=webhook.id, enqueue=False)
    starts = iter([first, second])

    made = run_at_once(2, lambda: lanes.lane_run(attempt_id=next(starts)))

    assert sum(made) == 45
    ids = [request.headers["X-Service-Delivery"] for request in receiver.requests]
    assert len(ids) == len(set(ids)) == 45
    assert set(Delivery.objects.values_list("status", "attempt_count")) == {(DeliveryStatus.SUCCEEDED, 1)}
    for attempt in DeliveryAttempt.objects.all():
        assert (attempt.number, attempt.state, attempt.status_code, attempt.response_excerpt) == (
            1,
            AttemptState.DONE,
            200,
            "ok",
        )
        assert attempt.duration_ms is not None and attempt.started_at <= attempt.finished_at


@pytest.mark.django_db
def test_a_lane_that_dies_holding_a_batch_loses_nothing_and_spends_no_attempt(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    with time_machine.travel(START, tick=False) as clock:
        _events(owner, 3)
        assert len(lanes.deliveries_lease(webhook_id=webhook.id, limit=20)) == 3  # and then the worker dies

        clock.shift(lanes.lease() - timedelta(seconds=1))
        assert deliver_due() == []  # held by the lease
        clock.shift(timedelta(seconds=1))
        deliver_due()
        deliver_due()

    assert set(Delivery.objects.values_list("status", "attempt_count")) == {(DeliveryStatus.SUCCEEDED, 1)}
    assert list(DeliveryAttempt.objects.values_list("number", flat=True)) == [1, 1, 1]
    assert len(receiver.requests) == 3


@pytest.mark.django_db
def test_a_lane_whose_lease_ran_out_sends_nothing_the_tick_already_sent(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    with time_machine.travel(START, tick=False) as clock:
        _events(owner, 2)
        batch = lanes.deliveries_lease(webhook_id=webhook.id, limit=20)
        clock.shift(lanes.lease())
        deliver_due()  # the lease is over: the tick sends them

        made, _ = lanes.leased_send(batch, deadline=time.monotonic() + 10)  # the stalled lane wakes up

    assert made == 0
    assert len(receiver.requests) == 2
    assert DeliveryAttempt.objects.count() == 2


@pytest.mark.django_db
def test_a_redelivery_requested_while_a_lane_holds_the_delivery_is_sent_once(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    _events(owner, 1)
    batch = lanes.deliveries_lease(webhook_id=webhook.id, limit=20)

    endpoints.delivery_redeliver(delivery=Delivery.objects.get())
    made, _ = lanes.leased_send(batch, deadline=time.monotonic() + 10)
    deliver_due()

    assert made == 0
    assert len(receiver.requests) == 1
    assert Delivery.objects.get().status == DeliveryStatus.SUCCEEDED


@pytest.mark.django_db
def test_a_failure_in_a_batch_hands_the_rest_back_and_nothing_is_lost(make_webhook, receiver, owner):
    receiver.statuses = [200, 500]  # then 200
    webhook = make_webhook(receiver.url)
    _events(owner, 5)
    [first] = services.deliveries_dispatch(webhook_id=webhook.id, limit=1, enqueue=False)

    made = lanes.lane_run(attempt_id=first)

    assert made == 5 and len(receiver.requests) == 5
    [failed] = Delivery.objects.filter(status=DeliveryStatus.PENDING)
    assert failed.attempt_count == 1 and failed.attempts.get().status_code == 500
    assert Delivery.objects.filter(status=DeliveryStatus.SUCCEEDED).count() == 4
    webhook.refresh_from_db()
    assert webhook.last_failure_at is None  # a later success ended the streak


@pytest.mark.django_db
def test_a_failing_endpoint_gets_no_batch(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    _events(owner, 3)
    webhook.last_failure_at = START
    webhook.save()

    assert lanes.deliveries_lease(webhook_id=webhook.id, limit=20) == []


@pytest.mark.django_db
def test_a_secret_rotated_while_a_lane_holds_a_batch_signs_its_next_attempt(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    _events(owner, 1)
    batch = lanes.deliveries_lease(webhook_id=webhook.id, limit=20)

    rotated = endpoints.webhook_rotate_secret(webhook=webhook, overlap_hours=0)
    lanes.leased_send(batch, deadline=time.monotonic() + 10)

    [request] = receiver.requests
    expected = signing.service_signature(rotated.secret, request.body)
    assert request.headers["X-Service-Signature"] == expected
    assert "X-Service-Signature-Previous" not in request.headers


@pytest.mark.django_db
def test_a_lane_posts_its_deliveries_over_one_kept_alive_connection(make_webhook, make_receiver, owner):
    receiver = make_receiver(keep_alive=True)
    webhook = make_webhook(receiver.url)
    _events(owner, 5)
    [first] = services.deliveries_dispatch(webhook_id=webhook.id, limit=1, enqueue=False)

    assert lanes.lane_run(attempt_id=first) == 5

    assert len(receiver.requests) == 5
    assert len({request.client_port for request in receiver.requests}) == 1


@pytest.mark.django_db
def test_a_batch_held_when_the_endpoint_starts_failing_elsewhere_is_handed_back_due(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    _events(owner, 3)
    batch = lanes.deliveries_lease(webhook_id=webhook.id, limit=20)
    webhook.last_failure_at = START  # another lane's attempt failed meanwhile
    webhook.save()

    made, healthy = lanes.leased_send(batch, deadline=time.monotonic() + 10)

    assert (made, healthy) == (0, False)
    assert receiver.requests == []
    assert set(Delivery.objects.values_list("attempt_count", flat=True)) == {0}
    assert deliver_due()  # due again at once, for the failing endpoint's one attempt at a time


@pytest.mark.django_db
def test_successes_recorded_together_settle_each_delivery_and_end_the_failure_streak(make_webhook, receiver, owner):
    import outbound
    from webhooks.models import Webhook

    webhook = make_webhook(receiver.url)
    _events(owner, 3)
    attempts = [lanes.leased_start(leased)[0] for leased in lanes.deliveries_lease(webhook_id=webhook.id, limit=3)]
    Webhook.objects.filter(pk=webhook.pk).update(consecutive_failures=2)  # an earlier streak, no failure now

    webhook_attempts.attempts_record_succeeded(
        [(attempt, outbound.Response(200 + n, 5 + n, "", body=b"ok")) for n, attempt in enumerate(attempts)]
    )

    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.SUCCEEDED}
    assert Delivery.objects.filter(delivered_at__isnull=True).count() == 0
    recorded = {a.id: a for a in DeliveryAttempt.objects.all()}
    for n, attempt in enumerate(attempts):
        done = recorded[attempt.id]
        assert (done.state, done.status_code, done.duration_ms, done.response_excerpt) == (
            AttemptState.DONE,
            200 + n,
            5 + n,
            "ok",
        )
        assert done.finished_at is not None
    assert Webhook.objects.get(pk=webhook.pk).consecutive_failures == 0

"""Events in order: every event carries its id, createdAt, objectId and a per-object sequence,
and one endpoint gets one object's events in sequence order; the next waits until the previous
one succeeded or was given up, while other objects and other endpoints go on."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

import pytest
from django.db.models import F
from rest_framework.test import APIClient

from config.celery import app as celery_app
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import draft_payment_observed, make_draft
from tests.webhooks.conftest import deliver_all_due, deliver_due, record
from tests.webhooks.test_killed_worker import _kill, _worker_env
from webhooks import lanes, services
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event, EventType

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


def arrived(receiver) -> list[tuple[str, str, int]]:
    """(objectId, event, sequence) of each request, in the order they reached the receiver."""
    bodies = [json.loads(r.body) for r in receiver.requests]
    return [(b["objectId"], b["event"], b["sequence"]) for b in bodies]


def out_of_order(receiver) -> list[str]:
    """Objects whose events reached the receiver with a sequence lower than one already seen."""
    last: dict[str, int] = {}
    late = []
    for object_id, _, sequence in arrived(receiver):
        if sequence < last.get(object_id, 0):
            late.append(object_id)
        last[object_id] = max(sequence, last.get(object_id, 0))
    return late


def test_a_drafts_events_count_up_from_one_and_name_their_draft(owner):
    draft = make_draft(owner)
    amount = draft.amount_base_units
    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=amount, confirmations=0)
    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=amount, confirmations=12)
    other = make_draft(owner, amount_base_units=26_000_000)
    draft_payment_observed(draft_id=other.id, tx_id="0x2", received_base_units=26_000_000, confirmations=12)

    mine = list(Event.objects.filter(object_id=draft.id).order_by("created_at").values_list("type", "sequence"))
    assert mine == [("draft.seen", 1), ("draft.confirmed", 2)]
    theirs = list(Event.objects.filter(object_id=other.id).order_by("created_at").values_list("type", "sequence"))
    assert theirs == [("draft.seen", 1), ("draft.confirmed", 2)]


def test_a_later_event_waits_for_the_earlier_one_of_its_object_until_it_is_given_up(make_webhook, make_receiver, owner):
    failing = make_receiver(status=500)
    make_webhook(failing.url)
    healthy = make_receiver()
    make_webhook(healthy.url)
    a, b = uuid.uuid4(), uuid.uuid4()
    record(owner, EventType.DRAFT_SEEN, {"draftId": str(a)})
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": str(a)})
    record(owner, EventType.DRAFT_SEEN, {"draftId": str(b)})

    deliver_all_due()

    # The healthy endpoint got everything, a's events in order: the failing one is not waited for.
    assert sorted(arrived(healthy)) == sorted(
        [(str(a), "draft.seen", 1), (str(a), "draft.confirmed", 2), (str(b), "draft.seen", 1)]
    )
    assert out_of_order(healthy) == []
    # The failing endpoint got a's first event and b's (another object is not held), never a's second.
    assert {(o, e) for o, e, _ in arrived(failing)} == {(str(a), "draft.seen"), (str(b), "draft.seen")}

    # Retries keep failing; a's draft.confirmed goes only once its draft.seen is given up.
    seen = Delivery.objects.get(webhook__url=failing.url, event__object_id=a, event__type="draft.seen")
    for _ in range(2 * services.MAX_ATTEMPTS):
        seen.refresh_from_db()
        if seen.status == DeliveryStatus.FAILED:
            break
        assert (str(a), "draft.confirmed", 2) not in arrived(failing)
        Delivery.objects.filter(status=DeliveryStatus.PENDING).update(
            next_attempt_at=F("next_attempt_at") - timedelta(hours=3)
        )
        deliver_due()
    assert seen.status == DeliveryStatus.FAILED
    failing.status = 200
    deliver_all_due()
    assert (str(a), "draft.confirmed", 2) in arrived(failing)
    assert out_of_order(failing) == []  # a retry repeats its sequence; none came after a later one


@pytest.mark.django_db(transaction=True)
def test_a_lane_leases_an_objects_next_event_only_after_the_previous_one_settled(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    a, b = uuid.uuid4(), uuid.uuid4()
    record(owner, EventType.DRAFT_SEEN, {"draftId": str(a)})
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": str(a)})
    record(owner, EventType.DRAFT_SEEN, {"draftId": str(b)})

    leased = lanes.deliveries_lease(webhook_id=webhook.id, limit=10)
    assert sorted((str(x.event.object_id), x.event.type) for x in leased) == sorted(
        [(str(a), "draft.seen"), (str(b), "draft.seen")]
    )
    attempted, healthy = lanes.leased_send(leased, deadline=time.monotonic() + 30)
    assert (attempted, healthy) == (2, True)
    (last,) = lanes.deliveries_lease(webhook_id=webhook.id, limit=10)
    assert (last.event.object_id, last.event.type, last.event.sequence) == (a, "draft.confirmed", 2)


def _start_prefork_worker(log: Path) -> subprocess.Popen:
    """A worker as deployed by default: prefork, two processes."""
    return subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "celery"),
            "-A",
            "config",
            "worker",
            "--pool=prefork",
            "--concurrency=2",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"ordertest-{uuid.uuid4().hex[:8]}@%h",
        ],
        cwd=ROOT,
        env=_worker_env(),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_200_test_drafts_created_seen_and_confirmed_reach_a_receiver_in_sequence_order_through_a_worker(
    make_key, make_receiver, settings, fake_dns, tmp_path
):
    settings.PLATFORM_FEE_ADDRESSES = FEE_ADDRESSES
    settings.API_RATE_LIMITS = {"read": "100000/min", "write": "100000/min"}
    unlimited = {"key": "100000/min", "account": "100000/min"}
    settings.API_COST_RATE_LIMITS = {**settings.API_COST_RATE_LIMITS, "test-helper": unlimited}
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(livemode=False)}")
    receiver = make_receiver()
    created = client.post("/api/v1/webhooks", {"url": receiver.url}, format="json")
    assert created.status_code == 200, created.content
    celery_app.control.purge()
    log = tmp_path / "worker.log"
    worker = _start_prefork_worker(log)
    drafts = []
    try:
        for n in range(200):
            body = {
                "network": "Sepolia",
                "currency": "USDC",
                "receiverAddress": ADDRESSES["Sepolia"],
                "amountSats": 25_000_000 + n,
            }
            response = client.post("/api/v1/drafts", body, format="json")
            assert response.status_code == 201, response.content
            draft_id = response.json()["id"]
            drafts.append(draft_id)
            # Seen, then confirmed: two changes right after each other, as a watcher's passes make them
            pay = f"/api/v1/test-helpers/drafts/{draft_id}/pay"
            assert client.post(pay, {"confirmations": 0}, format="json").status_code == 200
            assert client.post(pay, {}, format="json").status_code == 200
        deadline = time.monotonic() + 240
        next_tick = 0.0
        while len(receiver.requests) < 600:
            assert time.monotonic() < deadline, f"{len(receiver.requests)} of 600 arrived\n{log.read_text()[-3000:]}"
            if time.monotonic() >= next_tick:  # the beat's tick, as deployed
                celery_app.send_task("webhooks.dispatch_due")
                next_tick = time.monotonic() + 5
            time.sleep(0.2)
    finally:
        _kill(worker)

    by_object = defaultdict(list)
    for object_id, event, sequence in arrived(receiver):
        by_object[object_id].append((sequence, event))
    assert set(by_object) == set(drafts)
    assert out_of_order(receiver) == []
    for draft_id in drafts:
        assert by_object[draft_id] == [(1, "draft.created"), (2, "draft.seen"), (3, "draft.confirmed")]
    assert len({r.headers["X-Service-Delivery"] for r in receiver.requests}) == 600
    assert not Delivery.objects.filter(status=DeliveryStatus.PENDING).exists()


@pytest.mark.django_db(transaction=True)
def test_a_pass_keeps_several_deliveries_of_a_healthy_endpoint_in_flight_but_never_two_of_one_object(
    make_webhook, make_receiver, owner, settings
):
    from webhooks import passes

    # Given a healthy endpoint answering 0.3 s late, owed three events of each of six drafts
    settings.WEBHOOKS_PER_ENDPOINT_CONCURRENCY = 4
    receiver = make_receiver(delay=0.3, keep_alive=True)
    make_webhook(receiver.url)
    drafts = [str(uuid.uuid4()) for _ in range(6)]
    for kind in (EventType.DRAFT_SEEN, EventType.DRAFT_CONFIRMED, EventType.DRAFT_PAYMENT_REVERTED):
        for draft in drafts:
            record(owner, kind, {"draftId": draft})
    # When one pass delivers them
    passes._seen.clear()
    report = passes.pass_run(seconds=4)
    # Then all arrive, each draft's in sequence order, with up to 4 requests at once
    assert Delivery.objects.filter(status=DeliveryStatus.SUCCEEDED).count() == 18
    assert len(receiver.requests) == 18 and out_of_order(receiver) == []
    assert report.most_in_flight == 4
    # and no two of one draft's attempts were ever open at the same time
    spans: dict[str, list[tuple]] = defaultdict(list)
    for attempt in DeliveryAttempt.objects.select_related("delivery__event"):
        spans[str(attempt.delivery.event.object_id)].append((attempt.started_at, attempt.finished_at))
    for draft in drafts:
        ordered = sorted(spans[draft])
        assert len(ordered) == 3
        assert all(ordered[n][1] <= ordered[n + 1][0] for n in range(2)), ordered

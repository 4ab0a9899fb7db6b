"""An event's deliveries: written in the event's own statement on PostgreSQL, and the same rows
as the read-then-bulk-create way other databases take."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.utils import timezone

from core.sql.rows import RowInserter, insert_then_fetch
from webhooks.fanout import DELIVERIES
from webhooks.models import Delivery, Event, EventType

pytestmark = pytest.mark.django_db

COMPARED = [f.attname for f in Delivery._meta.concrete_fields if f.attname not in ("id", "event_id")]


@pytest.fixture
def endpoints(make_webhook, owner, other_account):
    """Every case Webhook.wants tells apart, and another account's endpoint."""
    everything = make_webhook("https://127.0.0.1/all")
    created_only = make_webhook("https://127.0.0.1/created", events=["draft.created"])
    confirmed_only = make_webhook("https://127.0.0.1/confirmed", events=["draft.confirmed"])
    unmatched_only = make_webhook("https://127.0.0.1/unmatched", events=["transfer.unmatched"])
    disabled = make_webhook("https://127.0.0.1/disabled")
    disabled.active = False
    disabled.save()
    make_webhook("https://127.0.0.1/theirs", user=other_account)
    return {
        "everything": everything,
        "created_only": created_only,
        "confirmed_only": confirmed_only,
        "unmatched_only": unmatched_only,
        "disabled": disabled,
    }


def _event(owner, type: str) -> Event:
    return Event(user=owner, type=type, data={"n": 1}, created_at=timezone.now())


def _in_one_statement(event: Event) -> list:
    return insert_then_fetch([(RowInserter(Event), event)], DELIVERIES, event)


def _read_then_bulk_create(event: Event) -> list:
    RowInserter(Event).insert(event)
    return DELIVERIES.fetch(event)


def _deliveries_of(event: Event) -> dict:
    return {
        d.webhook_id: {name: getattr(d, name) for name in COMPARED} | {"event_id": d.event_id}
        for d in Delivery.objects.filter(event=event)
    }


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement fan-out is PostgreSQL's")
@pytest.mark.parametrize(
    ("type", "expected"),
    [
        ("draft.created", {"everything", "created_only", "disabled"}),
        ("draft.confirmed", {"everything", "confirmed_only", "disabled"}),
        ("transfer.unmatched", {"unmatched_only"}),  # opt-in: only endpoints that list it
    ],
)
def test_both_ways_write_the_same_deliveries_to_the_endpoints_that_want_the_event(owner, endpoints, type, expected):
    with transaction.atomic():
        one = _event(owner, type)
        fanned = _in_one_statement(one)
        other = _event(owner, type)
        other.created_at = one.created_at
        read_then_created = _read_then_bulk_create(other)

    wanted = {endpoints[name].id for name in expected}
    assert {w.id for w in fanned} == {w.id for w in read_then_created} == wanted
    in_one, in_two = _deliveries_of(one), _deliveries_of(other)
    assert set(in_one) == wanted
    for webhook_id in wanted:
        assert in_one[webhook_id] | {"event_id": None} == in_two[webhook_id] | {"event_id": None}
        assert in_one[webhook_id]["status"] == "Pending"
        assert in_one[webhook_id]["next_attempt_at"] == one.created_at


def test_an_event_without_interested_endpoints_has_no_deliveries(owner, make_webhook):
    make_webhook("https://127.0.0.1/confirmed", events=["draft.confirmed"])
    with transaction.atomic():
        event = _event(owner, EventType.DRAFT_CREATED)
        assert _in_one_statement(event) == []
    assert not Delivery.objects.filter(event=event).exists()
    assert Event.objects.filter(pk=event.pk).exists()

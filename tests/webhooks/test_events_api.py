"""The events API: GET /api/v1/events (filters, the key's mode), GET /api/v1/events/{id}, the
stream `listen` reads (GET /api/v1/events/stream) and POST /api/v1/events/{id}/redeliver."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from tests.openapi import errors_against
from tests.webhooks.conftest import deliver_all_due, record
from webhooks import endpoints
from webhooks.api import edge
from webhooks.models import Delivery, DeliveryStatus, Event, EventType

pytestmark = pytest.mark.django_db


def _aged(event: Event, seconds: float) -> Event:
    """Recorded `seconds` ago (the stream gives an event once it is a second old)."""
    Event.objects.filter(pk=event.pk).update(created_at=timezone.now() - timedelta(seconds=seconds))
    event.refresh_from_db()
    return event


@pytest.fixture
def history(owner):
    """A draft's three events and another draft's one, recorded in that order, a minute apart."""
    a, b = uuid.uuid4(), uuid.uuid4()
    events = [
        record(owner, EventType.DRAFT_CREATED, {"draftId": str(a)}),
        record(owner, EventType.DRAFT_SEEN, {"draftId": str(a)}),
        record(owner, EventType.DRAFT_CREATED, {"draftId": str(b)}),
        record(owner, EventType.DRAFT_CONFIRMED, {"draftId": str(a)}),
    ]
    return [_aged(event, 60 * (len(events) - n)) for n, event in enumerate(events)], a, b


def test_events_are_listed_newest_first_with_the_shape_deliveries_carry(api_client, history):
    events, a, _ = history
    body = api_client.get("/api/v1/events").json()

    assert errors_against(body, "EventPage") == []
    assert [item["id"] for item in body["items"]] == [str(e.id) for e in reversed(events)]
    assert body["total"] == 4
    confirmed = body["items"][0]
    assert confirmed["event"] == "draft.confirmed" and confirmed["objectId"] == str(a)
    assert confirmed["sequence"] == 3 and confirmed["livemode"] is True
    assert confirmed["data"] == {"draftId": str(a)}
    assert api_client.get(f"/api/v1/events/{events[1].id}").json()["sequence"] == 2


def test_events_filter_by_type_object_and_creation_time(api_client, history):
    events, a, b = history

    def ids(**query) -> list[str]:
        response = api_client.get("/api/v1/events", query)
        assert response.status_code == 200, response.content
        return [item["id"] for item in response.json()["items"]]

    assert ids(type="draft.created") == [str(events[2].id), str(events[0].id)]
    assert ids(objectId=str(a)) == [str(events[3].id), str(events[1].id), str(events[0].id)]
    assert ids(objectId=str(b), type="draft.created") == [str(events[2].id)]
    middle = {"from": events[1].created_at.isoformat(), "to": events[2].created_at.isoformat()}
    assert ids(**middle) == [str(events[2].id), str(events[1].id)]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"type": "draft.paid"}, "type"),
        ({"objectId": "nope"}, "objectId"),
        ({"from": "yesterday"}, "from"),
        ({"sort": "asc"}, "sort"),
    ],
)
def test_a_bad_filter_is_a_problem_naming_it(api_client, query, field):
    response = api_client.get("/api/v1/events", query)

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert field in {error["field"] for error in response.json()["errors"]}


def test_a_test_key_sees_test_events_only_and_a_live_key_live_ones(owner, make_key):
    live = record(owner, EventType.DRAFT_SEEN, {"draftId": str(uuid.uuid4())})
    with_test = Event.objects.create(user=owner, type=EventType.DRAFT_SEEN, data={}, livemode=False)
    test_client, live_client = APIClient(), APIClient()
    test_client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(livemode=False)}")
    live_client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key()}")

    assert [i["id"] for i in test_client.get("/api/v1/events").json()["items"]] == [str(with_test.id)]
    assert [i["id"] for i in live_client.get("/api/v1/events").json()["items"]] == [str(live.id)]
    assert test_client.get(f"/api/v1/events/{live.id}").status_code == 404
    assert live_client.get(f"/api/v1/events/{with_test.id}").status_code == 404


def test_another_accounts_event_is_not_found(api_client, other_account):
    theirs = record(other_account, EventType.DRAFT_SEEN, {"draftId": str(uuid.uuid4())})

    assert api_client.get(f"/api/v1/events/{theirs.id}").status_code == 404
    assert api_client.post(f"/api/v1/events/{theirs.id}/redeliver").status_code == 404


def test_reading_events_needs_events_read_and_redelivering_webhooks_manage(client_with_scopes, owner):
    event = record(owner, EventType.DRAFT_SEEN, {"draftId": str(uuid.uuid4())})
    reader = client_with_scopes("events:read")
    manager = client_with_scopes("webhooks:manage")

    assert reader.get("/api/v1/events").status_code == 200
    assert reader.get("/api/v1/events/stream").status_code == 200
    refused = reader.post(f"/api/v1/events/{event.id}/redeliver")
    assert refused.status_code == 403 and refused.json()["code"] == "missing_scope"
    refused = manager.get("/api/v1/events")
    assert refused.status_code == 403 and refused.json()["requiredScope"] == "events:read"


def test_the_stream_gives_events_after_the_cursor_oldest_first(api_client, history, monkeypatch):
    events, _, _ = history
    monkeypatch.setattr(edge, "MAX_STREAM_LIMIT", 2)  # 100 a call: here 2, to see the cursor move on

    first = api_client.get("/api/v1/events/stream").json()
    assert errors_against(first, "EventStream") == []
    assert [item["id"] for item in first["items"]] == [str(events[0].id), str(events[1].id)]
    assert first["next"] == str(events[1].id)
    rest = api_client.get("/api/v1/events/stream", {"startingAfter": first["next"]}).json()
    assert [item["id"] for item in rest["items"]] == [str(events[2].id), str(events[3].id)]
    assert [item["sequence"] for item in rest["items"]] == [1, 3]
    only = api_client.get("/api/v1/events/stream", {"type": "draft.seen,draft.confirmed"}).json()
    assert [item["event"] for item in only["items"]] == ["draft.seen", "draft.confirmed"]
    end = api_client.get("/api/v1/events/stream", {"startingAfter": rest["next"]}).json()
    assert end == {"items": [], "next": rest["next"]}


def test_the_stream_holds_back_an_event_not_yet_settled_and_a_long_poll_waits_for_it(api_client, owner):
    last = _aged(record(owner, EventType.DRAFT_SEEN, {"draftId": str(uuid.uuid4())}), 60)
    fresh = record(owner, EventType.DRAFT_SEEN, {"draftId": str(uuid.uuid4())})  # just now
    after = {"startingAfter": str(last.id)}

    assert api_client.get("/api/v1/events/stream", after).json() == {"items": [], "next": str(last.id)}
    waited = api_client.get("/api/v1/events/stream", after | {"wait": 10}).json()
    assert [item["id"] for item in waited["items"]] == [str(fresh.id)]

    started = time.monotonic()
    empty = api_client.get("/api/v1/events/stream", {"startingAfter": str(fresh.id), "wait": 1}).json()
    assert time.monotonic() - started >= 1.0
    assert empty == {"items": [], "next": str(fresh.id)}


def test_a_poll_beyond_the_waiters_allowed_answers_at_once(api_client, owner, settings):
    settings.EVENTS_STREAM_MAX_WAITERS = 0
    last = _aged(record(owner, EventType.DRAFT_SEEN, {"draftId": str(uuid.uuid4())}), 60)

    started = time.monotonic()
    answer = api_client.get("/api/v1/events/stream", {"startingAfter": str(last.id), "wait": 10})
    assert time.monotonic() - started < 5
    assert answer.json() == {"items": [], "next": str(last.id)}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"wait": 26}, "wait"),
        ({"wait": -1}, "wait"),
        ({"startingAfter": str(uuid.uuid4())}, "startingAfter"),
        ({"type": "nothing"}, "type"),
        ({"after": "x"}, "after"),
    ],
)
def test_a_bad_stream_query_is_a_problem_naming_the_field(api_client, query, field):
    response = api_client.get("/api/v1/events/stream", query)

    assert response.status_code == 400
    assert field in {error["field"] for error in response.json()["errors"]}


def test_an_event_is_sent_again_to_every_endpoint_that_had_it(api_client, make_webhook, make_receiver, owner):
    first, second = make_receiver(), make_receiver()
    make_webhook(first.url)
    make_webhook(second.url)
    event = record(owner, EventType.DRAFT_CONFIRMED, {"draftId": str(uuid.uuid4())})
    deliver_all_due()

    response = api_client.post(f"/api/v1/events/{event.id}/redeliver")

    assert response.status_code == 200, response.content
    body = response.json()
    assert errors_against(body, "EventRedelivered") == []
    assert body["eventId"] == str(event.id) and len(body["deliveries"]) == 2
    assert {d["status"] for d in body["deliveries"]} == {"Pending"}
    deliver_all_due()
    assert len(first.requests) == len(second.requests) == 2
    assert first.requests[0].body == first.requests[1].body  # the same event, the same bytes
    assert first.requests[0].headers["X-Service-Delivery"] == first.requests[1].headers["X-Service-Delivery"]


def test_an_event_is_sent_to_a_named_endpoint_even_one_registered_after_it(
    api_client, make_webhook, make_receiver, owner
):
    event = record(owner, EventType.DRAFT_CONFIRMED, {"draftId": str(uuid.uuid4())})
    late = make_receiver()
    webhook = make_webhook(late.url)

    response = api_client.post(f"/api/v1/events/{event.id}/redeliver", {"webhookId": str(webhook.id)}, format="json")

    assert response.status_code == 200, response.content
    assert [d["webhookId"] for d in response.json()["deliveries"]] == [str(webhook.id)]
    deliver_all_due()
    assert [r.headers["X-Service-Event"] for r in late.requests] == ["draft.confirmed"]
    assert Delivery.objects.get(webhook=webhook).status == DeliveryStatus.SUCCEEDED


def test_redelivery_refusals_name_the_field(api_client, make_webhook, owner, other_account, loopback):
    event = record(owner, EventType.DRAFT_CONFIRMED, {"draftId": str(uuid.uuid4())})
    theirs = endpoints.webhook_create(user=other_account, url="http://127.0.0.1:9/x", events=None)

    unknown = api_client.post(f"/api/v1/events/{event.id}/redeliver", {"webhookId": str(theirs.id)}, format="json")
    assert unknown.status_code == 404 and unknown.json()["errors"][0]["field"] == "webhookId"
    bad = api_client.post(f"/api/v1/events/{event.id}/redeliver", {"webhookId": "x"}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "webhookId"
    none = api_client.post(f"/api/v1/events/{event.id}/redeliver")
    assert none.status_code == 409 and none.json()["code"] == "nothing_to_redeliver"
    mine = make_webhook("http://127.0.0.1:9/y")
    endpoints.webhook_update(webhook=mine, active=False)
    off = api_client.post(f"/api/v1/events/{event.id}/redeliver", {"webhookId": str(mine.id)}, format="json")
    assert off.status_code == 409 and off.json()["code"] == "webhook_disabled"


def test_a_refused_local_webhook_url_names_the_way_to_develop_locally(api_client):
    for url in ("http://localhost:3000/hook", "https://127.0.0.1/hook", "https://db/hook"):
        response = api_client.post("/api/v1/webhooks", {"url": url}, format="json")
        assert response.status_code == 400
        problem = response.json()
        assert problem["code"] == "webhook_url_not_allowed" and problem["errors"][0]["field"] == "url"
        assert "manage.py listen --forward-to" in problem["detail"] and "docs/examples/listen.py" in problem["detail"]

"""The endpoints API: /api/v1/webhooks, its test action, the delivery log and redelivery."""

from __future__ import annotations

import base64
import json
import uuid

import pytest

from tests.webhooks.conftest import deliver_due, record
from webhooks.models import OPT_IN_EVENT_TYPES, Delivery, EventType, Webhook

pytestmark = pytest.mark.django_db


@pytest.fixture
def created(api_client, loopback, receiver):
    response = api_client.post(
        "/api/v1/webhooks", {"url": receiver.url, "events": ["draft.confirmed", "draft.seen"]}, format="json"
    )
    assert response.status_code == 200, response.json()
    return response.json()


def test_creating_a_webhook_returns_its_shape_and_the_secret_once(api_client, created, receiver):
    listed = api_client.get("/api/v1/webhooks").json()["items"]

    assert set(created) == {
        "id",
        "url",
        "events",
        "active",
        "createdAt",
        "livemode",
        "previousSecretExpiresAt",
        "secret",
    }
    assert created["url"] == receiver.url
    assert created["events"] == ["draft.confirmed", "draft.seen"]
    assert created["active"] is True
    assert created["secret"].startswith("whsec_")
    assert len(base64.b64decode(created["secret"][6:], validate=True)) == 32
    assert [set(item) for item in listed] == [
        {"id", "url", "events", "active", "createdAt", "livemode", "previousSecretExpiresAt"}
    ]
    assert "secret" not in api_client.get(f"/api/v1/webhooks/{created['id']}").json()


def test_each_webhook_gets_its_own_secret(api_client, loopback):
    first = api_client.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/a"}, format="json").json()
    second = api_client.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/a"}, format="json").json()

    assert first["secret"] != second["secret"]


@pytest.mark.parametrize("events", [None, []])
def test_null_or_empty_events_subscribe_to_every_event_of_the_spec(api_client, loopback, owner, events):
    response = api_client.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/", "events": events}, format="json")

    assert response.status_code == 200
    assert response.json()["events"] is None
    webhook = Webhook.objects.get(id=response.json()["id"], user=owner)
    assert all(webhook.wants(event_type) for event_type in EventType.values if event_type not in OPT_IN_EVENT_TYPES)
    assert not webhook.wants("transfer.unmatched")  # beyond the spec: only when named


def test_an_endpoint_naming_an_opt_in_event_gets_it(api_client, loopback, owner):
    body = {"url": "http://127.0.0.1:9/", "events": ["transfer.unmatched", "draft.confirmed"]}
    response = api_client.post("/api/v1/webhooks", body, format="json")
    assert response.status_code == 200
    webhook = Webhook.objects.get(id=response.json()["id"], user=owner)
    assert webhook.wants("transfer.unmatched") and not webhook.wants("draft.seen")


def test_an_unknown_event_type_is_a_400_naming_the_events_field(api_client, loopback):
    response = api_client.post(
        "/api/v1/webhooks", {"url": "http://127.0.0.1:9/", "events": ["draft.paid"]}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["code"] == "invalid_event_type"
    assert response.json()["errors"][0]["field"] == "events"


@pytest.mark.parametrize("body", [{}, {"url": None}, {"url": 7}, {"url": "https://93.184.216.34/", "extra": 1}])
def test_malformed_bodies_are_400_not_500(api_client, body):
    response = api_client.post("/api/v1/webhooks", body, format="json")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"


def test_managing_webhooks_needs_the_webhooks_manage_scope(client_with_scopes, created):
    client = client_with_scopes("drafts:read", "drafts:write")

    for method, path in [
        ("get", "/api/v1/webhooks"),
        ("post", "/api/v1/webhooks"),
        ("delete", f"/api/v1/webhooks/{created['id']}"),
        ("post", f"/api/v1/webhooks/{created['id']}/test"),
        ("get", f"/api/v1/webhooks/{created['id']}/deliveries"),
    ]:
        response = getattr(client, method)(path, {}, format="json")
        assert response.status_code == 403, path
        assert response.json()["code"] == "missing_scope"


def test_a_key_with_only_webhooks_manage_can_register(client_with_scopes, loopback):
    client = client_with_scopes("webhooks:manage")

    assert client.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/"}, format="json").status_code == 200


def test_anonymous_callers_get_401(anon_client):
    assert anon_client.get("/api/v1/webhooks").status_code == 401


def test_another_accounts_webhook_is_404_everywhere(client_with_scopes, other_account, created):
    other = client_with_scopes("webhooks:manage", user=other_account)
    base = f"/api/v1/webhooks/{created['id']}"

    assert other.get("/api/v1/webhooks").json()["items"] == []
    assert other.get(base).status_code == 404
    assert other.delete(base).status_code == 404
    assert other.patch(base, {"active": False}, format="json").status_code == 404
    assert other.post(f"{base}/test").status_code == 404
    assert other.get(f"{base}/deliveries").status_code == 404
    assert Webhook.objects.filter(id=created["id"]).exists()


@pytest.mark.parametrize("bad", ["not-a-uuid", "123", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", "-" * 36])
def test_non_uuid_ids_are_404(api_client, bad):
    assert api_client.get(f"/api/v1/webhooks/{bad}").status_code == 404
    assert api_client.delete(f"/api/v1/webhooks/{bad}").status_code == 404
    assert api_client.post(f"/api/v1/webhooks/{bad}/test").status_code == 404


def test_deleting_a_webhook_removes_it_and_answers_200_with_the_deleted_endpoint(api_client, created):
    response = api_client.delete(f"/api/v1/webhooks/{created['id']}")

    assert response.status_code == 200
    assert response.json() == {key: value for key, value in created.items() if key != "secret"}
    empty = {"items": [], "page": 1, "pageSize": 20, "total": 0, "next": None}
    assert api_client.get("/api/v1/webhooks").json() == empty
    assert api_client.delete(f"/api/v1/webhooks/{created['id']}").status_code == 404


def test_the_test_action_delivers_a_test_event_to_that_endpoint_only(api_client, created, receiver, owner):
    other = api_client.post("/api/v1/webhooks", {"url": receiver.url + "/other"}, format="json").json()

    response = api_client.post(f"/api/v1/webhooks/{created['id']}/test")
    deliver_due()

    assert response.status_code == 200
    assert response.json()["event"] == "test"
    assert len(receiver.requests) == 1
    assert receiver.requests[0].path == "/hooks/payments"
    body = json.loads(receiver.requests[0].body)
    assert body["event"] == "test"
    assert set(body["data"]) == {"webhookId", "message", "occurredAt"}
    assert body["data"]["webhookId"] == created["id"]
    assert not Delivery.objects.filter(webhook_id=other["id"]).exists()


def test_the_delivery_log_pages_deliveries_with_each_attempt(api_client, created, receiver, owner):
    receiver.statuses = [500]
    record(owner, EventType.DRAFT_SEEN, {"draftId": str(uuid.uuid4())})
    deliver_due()

    page = api_client.get(f"/api/v1/webhooks/{created['id']}/deliveries?pageSize=10").json()

    assert page["total"] == 1 and page["page"] == 1 and page["pageSize"] == 10
    item = page["items"][0]
    assert item["event"] == "draft.seen"
    assert item["status"] == "Pending"
    assert item["attempts"] == 1
    attempt = item["attemptLog"][0]
    assert attempt["statusCode"] == 500
    assert attempt["error"] == "HTTP 500"
    assert attempt["durationMs"] >= 0
    assert attempt["at"] is not None


def test_redelivering_sends_the_same_delivery_id_again(api_client, created, receiver, owner):
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": str(uuid.uuid4())})
    deliver_due()
    delivery = Delivery.objects.get()

    response = api_client.post(f"/api/v1/webhooks/{created['id']}/deliveries/{delivery.id}/redeliver")
    deliver_due()

    assert response.status_code == 200
    assert [r.headers["X-Service-Delivery"] for r in receiver.requests] == [str(delivery.id)] * 2
    delivery.refresh_from_db()
    assert delivery.status == "Succeeded"
    assert delivery.attempts.count() == 2


def test_redelivering_another_webhooks_delivery_is_404(api_client, created, receiver, owner, loopback):
    second = api_client.post("/api/v1/webhooks", {"url": receiver.url}, format="json").json()
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": str(uuid.uuid4())})
    delivery = Delivery.objects.get(webhook_id=second["id"])

    response = api_client.post(f"/api/v1/webhooks/{created['id']}/deliveries/{delivery.id}/redeliver")

    assert response.status_code == 404


def test_a_disabled_webhook_can_be_re_enabled_with_a_patch(api_client, created):
    off = api_client.patch(f"/api/v1/webhooks/{created['id']}", {"active": False}, format="json")
    test_while_off = api_client.post(f"/api/v1/webhooks/{created['id']}/test")
    on = api_client.patch(f"/api/v1/webhooks/{created['id']}", {"active": True}, format="json")

    assert off.json()["active"] is False
    assert test_while_off.status_code == 409
    assert test_while_off.json()["code"] == "webhook_disabled"
    assert on.status_code == 200 and on.json()["active"] is True


def test_patch_changes_the_event_filter(api_client, created):
    response = api_client.patch(f"/api/v1/webhooks/{created['id']}", {"events": ["draft.expired"]}, format="json")

    assert response.json()["events"] == ["draft.expired"]


def test_re_enabling_checks_the_url_again(api_client, owner, fake_dns, loopback):
    fake_dns.answers["hooks.example.com"] = ["93.184.216.34"]
    created = api_client.post("/api/v1/webhooks", {"url": "https://hooks.example.com/"}, format="json").json()
    api_client.patch(f"/api/v1/webhooks/{created['id']}", {"active": False}, format="json")
    fake_dns.answers["hooks.example.com"] = ["192.168.7.7"]

    response = api_client.patch(f"/api/v1/webhooks/{created['id']}", {"active": True}, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "webhook_url_not_allowed"
    assert Webhook.objects.get(id=created["id"]).active is False


def test_the_list_is_paged_newest_first(api_client, loopback):
    ids = [
        api_client.post("/api/v1/webhooks", {"url": f"http://127.0.0.1:9/{n}"}, format="json").json()["id"]
        for n in range(3)
    ]

    first = api_client.get("/api/v1/webhooks?pageSize=2").json()
    second = api_client.get("/api/v1/webhooks?pageSize=2&page=2").json()

    assert first["total"] == 3 and first["pageSize"] == 2
    assert [item["id"] for item in first["items"] + second["items"]] == ids[::-1]
    assert api_client.get("/api/v1/webhooks?pageSize=101").status_code == 400

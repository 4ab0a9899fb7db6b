"""Changing a webhook's URL, and rotating its secret with an overlap in which both secrets sign."""

from __future__ import annotations

import hashlib
import hmac
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from standardwebhooks.webhooks import Webhook as StandardWebhook
from standardwebhooks.webhooks import WebhookVerificationError

from tests.webhooks.conftest import deliver_due, record
from webhooks.models import Delivery, EventType, Webhook

pytestmark = pytest.mark.django_db


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@pytest.fixture
def created(api_client, loopback, receiver):
    response = api_client.post("/api/v1/webhooks", {"url": receiver.url}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def rotate(api_client, webhook_id: str, body: dict | None = None):
    return api_client.post(f"/api/v1/webhooks/{webhook_id}/rotate-secret", body or {}, format="json")


def test_rotating_returns_a_new_secret_once_and_keeps_the_old_one_signing_for_24_hours(api_client, created):
    before = timezone.now()
    response = rotate(api_client, created["id"])

    assert response.status_code == 200
    body = response.json()
    assert body["secret"].startswith("whsec_") and body["secret"] != created["secret"]
    overlap_end = parse_datetime(body["previousSecretExpiresAt"])
    assert before + timedelta(hours=24) <= overlap_end <= timezone.now() + timedelta(hours=24)
    shown = api_client.get(f"/api/v1/webhooks/{created['id']}").json()
    assert "secret" not in shown and shown["previousSecretExpiresAt"] == body["previousSecretExpiresAt"]
    assert created["previousSecretExpiresAt"] is None


def test_during_the_overlap_deliveries_carry_both_signatures_and_afterwards_only_the_new_one(
    api_client, created, receiver, owner
):
    old = created["secret"]
    new = rotate(api_client, created["id"]).json()["secret"]
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d-1"})

    deliver_due()

    request = receiver.requests[0]
    assert request.headers["X-Service-Signature"] == sign(new, request.body)
    assert request.headers["X-Service-Signature-Previous"] == sign(old, request.body)
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new):  # the reference Standard Webhooks verifier accepts either secret
        assert StandardWebhook(secret).verify(request.body, request.headers)["event"] == "draft.seen"

    with time_machine.travel(timezone.now() + timedelta(hours=24, minutes=1)):
        record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d-1"})
        deliver_due()
        later = receiver.requests[1]
        assert later.headers["X-Service-Signature"] == sign(new, later.body)
        assert "X-Service-Signature-Previous" not in later.headers
        assert StandardWebhook(new).verify(later.body, later.headers)["event"] == "draft.confirmed"
        with pytest.raises(WebhookVerificationError):
            StandardWebhook(old).verify(later.body, later.headers)
        assert api_client.get(f"/api/v1/webhooks/{created['id']}").json()["previousSecretExpiresAt"] is None


def test_an_overlap_of_zero_retires_the_old_secret_at_once(api_client, created, receiver, owner):
    body = rotate(api_client, created["id"], {"overlapHours": 0}).json()
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d-1"})

    deliver_due()

    request = receiver.requests[0]
    assert body["previousSecretExpiresAt"] is None
    assert request.headers["X-Service-Signature"] == sign(body["secret"], request.body)
    assert "X-Service-Signature-Previous" not in request.headers
    assert " " not in request.headers["webhook-signature"]


def test_the_overlap_defaults_to_the_setting_and_a_second_rotation_retires_the_oldest_secret(
    api_client, created, settings
):
    settings.WEBHOOKS_SECRET_OVERLAP_HOURS = 2
    first = rotate(api_client, created["id"]).json()
    second = rotate(api_client, created["id"]).json()

    webhook = Webhook.objects.get(pk=created["id"])
    assert parse_datetime(first["previousSecretExpiresAt"]) <= timezone.now() + timedelta(hours=2)
    assert (webhook.secret, webhook.previous_secret) == (second["secret"], first["secret"])
    assert created["secret"] not in (webhook.secret, webhook.previous_secret)


@pytest.mark.parametrize("overlap", [-1, 169, "soon", 1.5])
def test_a_bad_overlap_is_a_400_naming_the_field_and_changes_nothing(api_client, created, overlap):
    response = rotate(api_client, created["id"], {"overlapHours": overlap})

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "overlapHours"
    assert Webhook.objects.get(pk=created["id"]).secret == created["secret"]


def test_rotating_needs_the_scope_and_another_accounts_webhook_is_404(client_with_scopes, other_account, created):
    path = f"/api/v1/webhooks/{created['id']}/rotate-secret"

    assert client_with_scopes("drafts:read").post(path).status_code == 403
    assert client_with_scopes("webhooks:manage", user=other_account).post(path).status_code == 404
    assert Webhook.objects.get(pk=created["id"]).secret == created["secret"]


def test_patch_moves_the_endpoint_to_a_new_url_and_owed_deliveries_follow_it(
    api_client, created, make_receiver, receiver, owner
):
    moved = make_receiver()
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d-1"})

    response = api_client.patch(f"/api/v1/webhooks/{created['id']}", {"url": moved.url}, format="json")
    deliver_due()

    assert response.status_code == 200 and response.json()["url"] == moved.url
    assert len(moved.requests) == 1 and receiver.requests == []
    assert Delivery.objects.get().status == "Succeeded"


@pytest.mark.parametrize(
    "url", ["http://hooks.example.com/", "https://10.0.0.7/hook", "https://169.254.169.254/", "https://db/"]
)
def test_a_new_url_passes_the_same_guard_as_a_registration(api_client, created, settings, url):
    settings.OUTBOUND_ALLOW_LOOPBACK = False

    response = api_client.patch(f"/api/v1/webhooks/{created['id']}", {"url": url}, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "webhook_url_not_allowed"
    assert response.json()["errors"][0]["field"] == "url"
    assert Webhook.objects.get(pk=created["id"]).url == created["url"]

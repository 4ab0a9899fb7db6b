import hashlib
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiKey
from accounts.services import api_key_create, api_key_revoke

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.platform.urls")]


def bearer(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def test_a_valid_key_authenticates_as_its_account(owner, make_key):
    response = bearer(make_key("drafts:read")).get("/api/v1/auth/me")
    assert response.status_code == 200
    assert (
        response.json()
        | {
            "id": str(owner.public_id),
            "email": "owner@example.com",
            "authenticatedWith": "apiKey",
            "sessionMethod": None,
            "scopes": ["drafts:read"],
        }
        == response.json()
    )


def test_a_key_looks_like_pdk_and_only_its_hash_is_stored(owner):
    issued = api_key_create(user=owner, name="ci", scopes=["drafts:read"])
    assert issued.key.startswith("pdk_") and len(issued.key) == 44 and issued.key[4:].isalnum()
    row = ApiKey.objects.get(pk=issued.api_key.pk)
    assert row.key_hash == hashlib.sha256(issued.key.encode()).hexdigest()
    stored = [str(value) for value in ApiKey.objects.values_list(*[f.attname for f in ApiKey._meta.fields]).get()]
    assert issued.key not in stored


def test_a_wrong_key_is_401_with_a_bearer_challenge(make_key):
    key = make_key("drafts:read")
    wrong = key[:-1] + ("A" if key[-1] != "A" else "B")
    response = bearer(wrong).get("/api/v1/auth/me")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "invalid_credentials"
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("token", ["not-a-key", "pdk_", "pdk_" + "x" * 200])
def test_garbage_tokens_are_401(token):
    assert bearer(token).get("/api/v1/auth/me").status_code == 401


def test_an_expired_key_is_401(owner):
    issued = api_key_create(
        user=owner, name="old", scopes=["drafts:read"], expires_at=timezone.now() + timedelta(seconds=1)
    )
    ApiKey.objects.filter(pk=issued.api_key.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = bearer(issued.key).get("/api/v1/auth/me")
    assert response.status_code == 401
    assert "expired" in response.json()["detail"]


def test_a_revoked_key_is_401(owner):
    issued = api_key_create(user=owner, name="gone", scopes=["drafts:read"])
    api_key_revoke(api_key=issued.api_key)
    response = bearer(issued.key).get("/api/v1/auth/me")
    assert response.status_code == 401
    assert "revoked" in response.json()["detail"]


def test_a_key_of_a_disabled_account_is_401(owner, make_key):
    key = make_key("drafts:read")
    owner.is_active = False
    owner.save()
    assert bearer(key).get("/api/v1/auth/me").status_code == 401


def test_no_credentials_is_401_not_authenticated(anon_client):
    response = anon_client.get("/api/v1/test/scoped")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_a_missing_scope_is_403_naming_the_scope(make_key):
    client = bearer(make_key("drafts:read"))
    assert client.get("/api/v1/test/scoped").status_code == 200
    response = client.post("/api/v1/test/scoped", {"amountSats": 1}, format="json")
    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "missing_scope"
    assert body["requiredScope"] == "drafts:write"
    assert "drafts:write" in body["detail"]


def test_using_a_key_records_when_it_was_last_used(make_key, owner):
    key = make_key("drafts:read")
    assert ApiKey.objects.get(user=owner).last_used_at is None
    bearer(key).get("/api/v1/auth/me")
    assert ApiKey.objects.get(user=owner).last_used_at is not None


@override_settings(API_RATE_LIMITS={"read": "1000/min", "write": "1000/min"})
def test_a_session_acts_with_every_scope(session_client):
    response = session_client.get("/api/v1/test/scoped")
    assert response.status_code == 200
    assert session_client.get("/api/v1/auth/me").json()["authenticatedWith"] == "session"

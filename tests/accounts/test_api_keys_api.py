import re
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiKey
from tests.conftest import step_up

pytestmark = pytest.mark.django_db


def csrf_session(user) -> APIClient:
    """A browser-like session: logged in with a second factor confirmed lately (creating a key
    asks for it), CSRF enforced, token taken from the cookie."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    step_up(client)
    client.get("/admin/login/")  # sets the csrftoken cookie, as any page of the site would
    client.credentials(HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    return client


def test_a_session_creates_a_key_and_sees_it_once(owner):
    client = csrf_session(owner)
    response = client.post(
        "/api/v1/api-keys", {"name": "agent", "scopes": ["drafts:read", "drafts:write"]}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert re.fullmatch(r"pdk_[A-Za-z0-9]{40}", body["key"])
    assert body["prefix"] == body["key"][:12]
    assert body["scopes"] == ["drafts:read", "drafts:write"]
    assert set(body) == {"id", "name", "prefix", "scopes", "expiresAt", "lastUsedAt", "createdAt", "livemode", "key"}

    listed = client.get("/api/v1/api-keys").json()
    assert listed["total"] == 1 and listed["page"] == 1 and listed["pageSize"] == 20
    assert [item["id"] for item in listed["items"]] == [body["id"]]
    assert "key" not in listed["items"][0]

    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {body['key']}")
    assert agent.get("/api/v1/auth/me").status_code == 200


def test_an_api_key_cannot_create_keys(api_client):
    response = api_client.post("/api/v1/api-keys", {"name": "x", "scopes": ["drafts:read"]}, format="json")
    assert response.status_code == 403
    assert response.json()["code"] == "session_required"
    assert api_client.get("/api/v1/api-keys").status_code == 403


def test_anonymous_callers_cannot_list_keys(anon_client):
    assert anon_client.get("/api/v1/api-keys").status_code == 401


def test_a_session_call_without_the_csrf_token_is_refused(owner):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(owner)
    response = client.post("/api/v1/api-keys", {"name": "x", "scopes": ["drafts:read"]}, format="json")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    assert not ApiKey.objects.exists()


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"name": "x", "scopes": ["drafts:fly"]}, "scopes", "invalid_choice"),
        ({"name": "x"}, "scopes", "required"),
        ({"name": "x", "scopes": []}, "scopes", "empty"),
        ({"name": "x", "scopes": ["drafts:read"], "expiresAt": "2001-01-01T00:00:00Z"}, "expiresAt", "in_the_past"),
        ({"name": "x", "scopes": ["drafts:read"], "expiresAt": "tomorrow"}, "expiresAt", "invalid"),
        ({"name": "x", "scopes": ["drafts:read"], "colour": "blue"}, "colour", "unknown_field"),
    ],
)
def test_bad_key_requests_name_the_field(owner, body, field, code):
    response = csrf_session(owner).post("/api/v1/api-keys", body, format="json")
    assert response.status_code == 400
    problem = response.json()
    assert any(error["field"].startswith(field) and error["code"] == code for error in problem["errors"]), problem
    assert not ApiKey.objects.exists()


def test_a_key_can_carry_an_expiry(owner):
    expires = (timezone.now() + timedelta(days=3)).isoformat()
    response = csrf_session(owner).post(
        "/api/v1/api-keys", {"scopes": ["rates:read"], "expiresAt": expires}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["expiresAt"] is not None


def test_deleting_a_key_revokes_it(owner, make_key):
    key = make_key("drafts:read")
    key_id = ApiKey.objects.get(user=owner).pk
    client = csrf_session(owner)
    response = client.delete(f"/api/v1/api-keys/{key_id}")
    assert response.status_code == 200
    assert response.json()["id"] == str(key_id) and "key" not in response.json()
    assert client.get("/api/v1/api-keys").json()["items"] == []
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert agent.get("/api/v1/auth/me").status_code == 401


def test_another_accounts_key_is_404(owner, other_account, make_key):
    make_key("drafts:read", user=other_account)
    theirs = ApiKey.objects.get(user=other_account)
    response = csrf_session(owner).delete(f"/api/v1/api-keys/{theirs.pk}")
    assert response.status_code == 404
    assert ApiKey.objects.get(pk=theirs.pk).revoked_at is None


@pytest.mark.parametrize("bad", ["not-a-uuid", "2aEE1DA809fCF6EF0e1be32d038d1-8f44-C", "-" * 36])
def test_a_non_uuid_id_is_a_problem_404(owner, bad):
    response = csrf_session(owner).delete(f"/api/v1/api-keys/{bad}")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_an_account_holds_at_most_the_configured_number_of_usable_keys(owner, other_account, make_key, settings):
    settings.API_KEYS_PER_ACCOUNT_MAX = 3
    make_key("drafts:read")
    make_key("drafts:read", expires_at=timezone.now() + timedelta(days=1))
    client = csrf_session(owner)

    def create(name: str):
        return client.post("/api/v1/api-keys", {"name": name, "scopes": ["drafts:read"]}, format="json")

    assert create("third").status_code == 200
    refused = create("fourth")
    assert refused.status_code == 409 and refused["Content-Type"] == "application/problem+json"
    body = refused.json()
    assert body["code"] == "api_key_limit_reached" and body["maxApiKeys"] == 3 and "3" in body["detail"]
    assert ApiKey.objects.filter(user=owner).count() == 3
    # Another account has its own allowance; a revoked or expired key frees a place.
    make_key("drafts:read", user=other_account)
    revoked = ApiKey.objects.filter(user=owner).first()
    assert client.delete(f"/api/v1/api-keys/{revoked.id}").status_code == 200
    assert create("again").status_code == 200
    assert create("one more").status_code == 409
    expired = ApiKey.objects.filter(user=owner, revoked_at__isnull=True).first()
    ApiKey.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert create("last").status_code == 200


def test_the_dashboard_and_the_command_refuse_a_key_past_the_cap(owner, make_key, settings):
    from django.core.management import CommandError, call_command
    from django.test import Client

    settings.API_KEYS_PER_ACCOUNT_MAX = 1
    make_key("drafts:read")
    browser = Client()
    browser.force_login(owner)
    step_up(browser)
    page = browser.post("/dashboard/api-keys/", {"name": "ci", "scopes": ["drafts:read"]})
    assert page.status_code == 200 and "the most allowed (1)" in page.content.decode()
    with pytest.raises(CommandError, match=r"the most allowed \(1\)"):
        call_command("issue_api_key", "--email", owner.email, "--scopes", "drafts:read")
    assert ApiKey.objects.filter(user=owner).count() == 1


@pytest.mark.django_db(transaction=True)
def test_keys_created_at_once_stop_at_the_cap(owner, settings):
    from accounts.services import api_key_create
    from core.problems import Conflict
    from tests.concurrency import run_at_once

    settings.API_KEYS_PER_ACCOUNT_MAX = 2

    def create() -> str:
        try:
            api_key_create(user=owner, name="racer", scopes=["drafts:read"])
        except Conflict as refused:
            return refused.code
        return "created"

    outcomes = run_at_once(5, create)
    assert sorted(outcomes) == ["api_key_limit_reached"] * 3 + ["created"] * 2
    assert ApiKey.objects.filter(user=owner).count() == 2

"""Sessions: CSRF under session auth (not under keys), sign-out, API keys managed from a
session and never by a key, what /auth/me shows."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.accounts.conftest import PASSWORD, csrf_call, csrf_post

pytestmark = pytest.mark.django_db


def test_a_session_write_without_the_csrf_token_is_refused(registered):
    response = registered.post("/api/v1/api-keys", {"name": "ci", "scopes": ["drafts:read"]}, format="json")

    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_a_session_creates_lists_and_revokes_api_keys_with_the_csrf_token(registered):
    created = csrf_post(registered, "/api/v1/api-keys", {"name": "ci", "scopes": ["drafts:read", "drafts:write"]})
    assert created.status_code == 200, created.content
    key = created.json()["key"]

    listed = registered.get("/api/v1/api-keys").json()
    revoked = csrf_call(registered, "delete", f"/api/v1/api-keys/{created.json()['id']}")

    assert [k["name"] for k in listed["items"]] == ["ci"] and "key" not in listed["items"][0]
    assert revoked.status_code == 200
    bearer = APIClient()
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert bearer.get("/api/v1/auth/me").status_code == 401


def test_an_api_key_works_without_csrf_but_can_never_mint_keys(registered):
    key = csrf_post(registered, "/api/v1/api-keys", {"name": "ci", "scopes": ["drafts:read"]}).json()["key"]
    bearer = APIClient(enforce_csrf_checks=True)
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

    me = bearer.get("/api/v1/auth/me")
    mint = bearer.post("/api/v1/api-keys", {"name": "x", "scopes": ["drafts:read"]}, format="json")
    drafts = bearer.get("/api/v1/drafts")

    assert (
        me.status_code == 200 and me.json()["authenticatedWith"] == "apiKey" and me.json()["scopes"] == ["drafts:read"]
    )
    assert me.json()["sessionMethod"] is None
    assert mint.status_code == 403 and mint.json()["code"] == "session_required"
    assert drafts.status_code == 200


@pytest.mark.parametrize(
    "path",
    ["/api/v1/auth/totp/setup", "/api/v1/auth/password/change", "/api/v1/api-keys"],
)
def test_session_only_endpoints_refuse_api_keys(api_client, path):
    response = api_client.post(path, {}, format="json")

    assert response.status_code == 403 and response.json()["code"] == "session_required"


def test_signing_out_ends_the_session(registered):
    response = csrf_post(registered, "/api/v1/auth/logout")

    assert response.status_code == 200 and response.json()["status"] == "signedOut"
    assert registered.get("/api/v1/auth/me").status_code in (401, 403)


def test_a_cross_site_form_cannot_start_a_sign_in(registered):
    response = APIClient().post(
        "/api/v1/auth/password/login",
        {"email": "merchant@example.com", "password": PASSWORD},
        content_type="application/x-www-form-urlencoded",
    )

    assert response.status_code == 415


def test_me_needs_credentials(anon_client):
    assert anon_client.get("/api/v1/auth/me").status_code in (401, 403)


def test_every_auth_body_the_spec_leaves_open_is_documented(anon_client):
    document = anon_client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()
    schemas = document["components"]["schemas"]
    named = [
        "RegisterBeginRequest",
        "RegisterCompleteRequest",
        "LoginCompleteRequest",
        "PasswordRegisterRequest",
        "EmailCodeCompleteRequest",
        "PasswordChangeRequest",
        "PasswordForgotRequest",
        "PasswordForgotCompleteRequest",
        "PasswordLoginRequest",
        "TotpCodeRequest",
        "AuthenticatorAttestationRawResponse",
        "AuthenticatorAssertionRawResponse",
    ]

    assert [name for name in named if name not in schemas] == []
    auth_paths = [p for p in document["paths"] if p.startswith("/api/v1/auth/")]
    assert len(auth_paths) >= 17
    for path in auth_paths:
        for operation in document["paths"][path].values():
            assert "200" in operation["responses"], path


def test_a_sign_in_from_a_new_browser_emails_the_owner_and_a_known_one_does_not(registered, caplog):
    from django.core import mail

    from notifications.services import emails_send_due
    from tests.accounts.conftest import sign_in

    caplog.set_level("INFO", logger="accounts.security")
    csrf_post(registered, "/api/v1/auth/logout")
    sign_in(registered, "merchant@example.com")  # the browser that registered: known (its device cookie)
    emails_send_due()
    before = [m.subject for m in mail.outbox]
    sign_in(APIClient(), "merchant@example.com")  # a new browser
    emails_send_due()
    after = [m.subject for m in mail.outbox]

    assert "New sign-in to your account" not in before
    assert after.count("New sign-in to your account") == 1
    assert "Sign-in from a new device" in caplog.text and PASSWORD not in caplog.text

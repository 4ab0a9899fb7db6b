"""Dashboard actions that could hand the account to someone else ask the session for a second
factor confirmed lately (config/authorization.py: step_up): turning the authenticator app off and
creating an API key. Without it the page answers 403 and nothing changes."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiKey
from accounts.totp import totp_enabled
from tests.accounts.test_totp import code_at
from tests.conftest import stepped_up

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(owner) -> APIClient:
    client = APIClient()
    client.force_login(owner)
    return client


def _recovery_codes(client: APIClient) -> list[str]:
    secret = client.post("/api/v1/auth/totp/setup", {}, format="json").json()["secret"]
    enabled = client.post("/api/v1/auth/totp/enable", {"code": code_at(secret, time.time())}, format="json")
    assert enabled.status_code == 200, enabled.content
    return enabled.json()["recoveryCodes"]


def test_turning_the_authenticator_app_off_asks_for_a_second_factor_now_or_lately(signed_in, owner):
    codes = _recovery_codes(signed_in)

    refused = signed_in.post("/dashboard/security/totp-off", {"code": "00000000"}, HTTP_ACCEPT="text/html")
    around = signed_in.post("/dashboard/security/", {"action": "totp_disable", "code": codes[0]})
    assert refused.status_code == 200 and around.status_code == 404
    assert totp_enabled(user=owner)

    # A recovery code (or a current code) in the request is the proof itself (accounts.totp.totp_disable).
    done = signed_in.post("/dashboard/security/totp-off", {"code": codes[0]})
    assert done.status_code == 302 and done["Location"].endswith("/dashboard/security/")
    assert not totp_enabled(user=owner)


def test_the_security_page_posts_turning_off_to_its_own_route(signed_in):
    _recovery_codes(signed_in)
    page = signed_in.get("/dashboard/security/").content.decode()
    assert 'action="/dashboard/security/totp-off"' in page


def test_creating_an_api_key_on_the_dashboard_asks_for_a_recent_second_factor(signed_in, owner):
    refused = signed_in.post("/dashboard/api-keys/", {"name": "ci", "scopes": ["drafts:read"]})
    assert refused.status_code == 302 and refused["Location"].startswith("/dashboard/confirm?next=")
    assert not ApiKey.objects.filter(user=owner).exists()

    stepped_up(signed_in)
    made = signed_in.post("/dashboard/api-keys/", {"name": "ci", "scopes": ["drafts:read"]})
    assert made.status_code == 200 and ApiKey.objects.filter(user=owner).exists()

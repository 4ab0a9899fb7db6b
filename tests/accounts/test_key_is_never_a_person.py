"""A key is never a person: an API key, however scoped and in either mode, cannot change the
account it belongs to (add a passkey, change the password, the second factor, the keys, the
sessions, delete it). Each such route answers 403 session_required as problem+json."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts.models import Passkey
from tests.accounts.authenticator import Authenticator

pytestmark = pytest.mark.django_db

ORIGIN = "http://testserver"


@pytest.fixture(params=[False, True], ids=["live-key", "test-key"])
def keyed(request, make_key) -> APIClient:
    client = APIClient()
    key = make_key("rates:read", livemode=not request.param)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def _session_required(response) -> None:
    assert response.status_code == 403, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "session_required"


def test_a_key_cannot_begin_adding_a_passkey_to_its_account(keyed, owner):
    response = keyed.post("/api/v1/auth/register/begin", {}, format="json")

    _session_required(response)
    assert "publicKey" not in response.json()
    assert "sessionid" not in response.cookies


def test_a_key_cannot_complete_adding_a_passkey_to_its_account(keyed, owner):
    begun = keyed.post("/api/v1/auth/register/begin", {}, format="json")
    options = begun.json().get("publicKey")
    credential = Authenticator().create_json(options, ORIGIN) if options else {"id": "x", "type": "public-key"}

    response = keyed.post("/api/v1/auth/register/complete", {"credential": credential, "name": "Mine"}, format="json")

    _session_required(response)
    assert not Passkey.objects.filter(user=owner).exists()


def test_a_key_is_not_taken_for_a_new_account_either(keyed, owner):
    """The anonymous sign-up with a passkey stays anonymous: a key presented there is refused,
    not treated as its account nor ignored."""
    response = keyed.post("/api/v1/auth/register/begin", {"email": "new@example.com"}, format="json")

    _session_required(response)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/api/v1/auth/password/change", {"currentPassword": "x", "newPassword": "y"}),
        ("post", "/api/v1/auth/totp/setup", {}),
        ("post", "/api/v1/auth/totp/enable", {"code": "123456"}),
        ("post", "/api/v1/auth/totp/disable", {"code": "123456"}),
        ("get", "/api/v1/auth/passkeys", None),
        ("patch", "/api/v1/auth/passkeys/00000000-0000-0000-0000-000000000000", {"name": "x"}),
        ("delete", "/api/v1/auth/passkeys/00000000-0000-0000-0000-000000000000", None),
        ("delete", "/api/v1/auth/account", None),
        ("get", "/api/v1/api-keys", None),
        ("post", "/api/v1/api-keys", {"scopes": ["rates:read"]}),
        ("delete", "/api/v1/api-keys/00000000-0000-0000-0000-000000000000", None),
        ("post", "/api/v1/auth/logout", {}),
    ],
)
def test_no_route_that_changes_the_account_takes_a_key(keyed, method, path, body):
    _session_required(getattr(keyed, method)(path, body, format="json"))

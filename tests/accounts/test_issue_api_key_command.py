from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from accounts.models import ApiKey, User

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("issue_api_key", *args, stdout=out)
    return out.getvalue()


def test_it_creates_the_account_and_prints_only_the_key():
    output = run("--email", "Agent@Example.com", "--scopes", "drafts:read,drafts:write", "--name", "bot")
    key = output.strip()
    assert output == key + "\n"
    assert key.startswith("pdk_")
    user = User.objects.get(email="agent@example.com")
    assert not user.has_usable_password()
    api_key = ApiKey.objects.get(user=user)
    assert api_key.scopes == ["drafts:read", "drafts:write"] and api_key.name == "bot"
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get("/api/v1/auth/me").json()["email"] == "agent@example.com"


def test_it_reuses_an_existing_account_and_sets_an_expiry(owner):
    run("--email", "owner@example.com", "--scopes", "rates:read", "--expires-in-days", "7")
    assert User.objects.count() == 1
    assert ApiKey.objects.get(user=owner).expires_at is not None


@pytest.mark.parametrize(
    "args",
    [
        ("--email", "a@example.com", "--scopes", "drafts:teleport"),
        ("--email", "not-an-email", "--scopes", "drafts:read"),
        ("--email", "a@example.com", "--scopes", ","),
        ("--email", "a@example.com", "--scopes", "drafts:read", "--expires-in-days", "0"),
    ],
)
def test_it_refuses_bad_arguments_without_writing(args):
    with pytest.raises(CommandError):
        run(*args)
    assert not ApiKey.objects.exists()

"""Passkeys: a new account verifies its address by code, registers a passkey (software
authenticator), signs out and back in with it, and manages its API keys from that session."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.contrib.sessions.models import Session
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import Passkey, UsedPasskeyChallenge, User
from tests.accounts.authenticator import Authenticator
from tests.accounts.conftest import csrf_call, csrf_post, emailed_code
from tests.concurrency import run_at_once
from tests.conftest import step_up

pytestmark = pytest.mark.django_db

ORIGIN = "http://testserver"  # BASE_URL in the tests: RP ID "testserver"


def passkey_account(client: APIClient, email: str, authenticator: Authenticator) -> dict:
    sent = client.post("/api/v1/auth/register/begin", {"email": email}, format="json")
    assert sent.json()["status"] == "emailCodeSent"
    options = client.post(
        "/api/v1/auth/register/begin", {"email": email, "code": emailed_code(email)}, format="json"
    ).json()
    assert options["status"] == "options", options
    credential = authenticator.create_json(options["publicKey"], ORIGIN)
    return client.post("/api/v1/auth/register/complete", {"credential": credential, "name": "Laptop"}, format="json")


def passkey_sign_in(client: APIClient, authenticator: Authenticator):
    options = client.post("/api/v1/auth/login/begin", format="json").json()["publicKey"]
    assert options["allowCredentials"] == [] and options["userVerification"] == "required"
    return client.post(
        "/api/v1/auth/login/complete", {"credential": authenticator.get_json(options, ORIGIN)}, format="json"
    )


def test_a_person_registers_with_a_passkey_signs_out_signs_in_with_it_and_creates_an_api_key():
    browser = APIClient(enforce_csrf_checks=True)
    authenticator = Authenticator()

    created = passkey_account(browser, "pk@example.com", authenticator)
    assert created.status_code == 200, created.content
    account = created.json()["account"]
    assert account["email"] == "pk@example.com" and account["hasPassword"] is False
    assert [p["name"] for p in account["passkeys"]] == ["Laptop"]
    assert authenticator.user_handle == User.objects.get(email="pk@example.com").public_id.bytes
    assert csrf_post(browser, "/api/v1/auth/logout").status_code == 200
    assert browser.get("/api/v1/auth/me").status_code in (401, 403)

    signed_in = passkey_sign_in(browser, authenticator)
    assert signed_in.status_code == 200, signed_in.content
    assert browser.get("/api/v1/auth/me").json()["sessionMethod"] == "passkey"
    key = csrf_post(browser, "/api/v1/api-keys", {"name": "agent", "scopes": ["drafts:write"]})

    assert key.status_code == 200 and key.json()["key"].startswith("pdk_")
    assert Passkey.objects.get().sign_count == 1


def test_a_signed_in_account_adds_a_second_passkey_and_lists_renames_and_deletes_them(registered):
    options = csrf_post(registered, "/api/v1/auth/register/begin").json()["publicKey"]
    first = Authenticator()
    added = csrf_post(
        registered,
        "/api/v1/auth/register/complete",
        {"credential": first.create_json(options, ORIGIN), "name": "Phone"},
    )
    step_up(registered)  # the account has a second factor now: adding another asks for it
    options = csrf_post(registered, "/api/v1/auth/register/begin").json()["publicKey"]
    assert len(options["excludeCredentials"]) == 1
    csrf_post(
        registered, "/api/v1/auth/register/complete", {"credential": Authenticator().create_json(options, ORIGIN)}
    )

    listed = registered.get("/api/v1/auth/passkeys").json()
    renamed = csrf_call(registered, "patch", f"/api/v1/auth/passkeys/{listed[0]['id']}", {"name": "Old phone"})
    deleted = csrf_call(registered, "delete", f"/api/v1/auth/passkeys/{listed[1]['id']}")

    assert added.status_code == 200 and added.json()["status"] == "passkeyAdded"
    assert [p["name"] for p in listed] == ["Phone", "Passkey"]
    assert renamed.json()["name"] == "Old phone"
    assert [p["name"] for p in deleted.json()] == ["Old phone"]


def test_the_last_way_to_sign_in_cannot_be_deleted():
    browser = APIClient(enforce_csrf_checks=True)
    passkey_account(browser, "pk@example.com", Authenticator())
    [passkey] = browser.get("/api/v1/auth/passkeys").json()

    response = csrf_call(browser, "delete", f"/api/v1/auth/passkeys/{passkey['id']}")

    assert response.status_code == 409 and response.json()["code"] == "last_factor"


def test_a_passkey_without_user_verification_is_refused():
    browser = APIClient()
    response = passkey_account(browser, "pk@example.com", Authenticator(user_verified=False))

    assert response.status_code == 400 and response.json()["code"] == "invalid_passkey"
    assert not User.objects.filter(email="pk@example.com").exists()


def test_a_sign_count_that_goes_back_is_refused_as_a_cloned_authenticator(caplog):
    authenticator = Authenticator()
    passkey_account(APIClient(), "pk@example.com", authenticator)
    assert passkey_sign_in(APIClient(), authenticator).status_code == 200
    assert passkey_sign_in(APIClient(), authenticator).status_code == 200

    authenticator.sign_count = 0  # the clone replays an older counter (next use sends 1)
    response = passkey_sign_in(APIClient(), authenticator)

    assert response.status_code == 401 and response.json()["code"] == "invalid_credentials"
    assert "cloned authenticator" in caplog.text


def test_a_challenge_is_used_once_and_expires_after_five_minutes():
    authenticator = Authenticator()
    browser = APIClient()
    passkey_account(browser, "pk@example.com", authenticator)
    options = browser.post("/api/v1/auth/login/begin", format="json").json()["publicKey"]
    assertion = authenticator.get_json(options, ORIGIN)
    assert browser.post("/api/v1/auth/login/complete", {"credential": assertion}, format="json").status_code == 200

    replayed = browser.post(
        "/api/v1/auth/login/complete", {"credential": authenticator.get_json(options, ORIGIN)}, format="json"
    )
    options = browser.post("/api/v1/auth/login/begin", format="json").json()["publicKey"]
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        expired = browser.post(
            "/api/v1/auth/login/complete", {"credential": authenticator.get_json(options, ORIGIN)}, format="json"
        )

    assert replayed.status_code == 400 and replayed.json()["code"] == "challenge_expired"
    assert expired.status_code == 400 and expired.json()["code"] == "challenge_expired"


def test_an_assertion_from_another_session_does_not_sign_in():
    authenticator = Authenticator()
    passkey_account(APIClient(), "pk@example.com", authenticator)
    victim = APIClient()
    options = victim.post("/api/v1/auth/login/begin", format="json").json()["publicKey"]

    attacker = APIClient()
    response = attacker.post(
        "/api/v1/auth/login/complete", {"credential": authenticator.get_json(options, ORIGIN)}, format="json"
    )

    assert response.status_code == 400 and response.json()["code"] == "challenge_expired"


def test_an_assertion_for_another_origin_is_refused():
    authenticator = Authenticator()
    browser = APIClient()
    passkey_account(browser, "pk@example.com", authenticator)
    options = browser.post("/api/v1/auth/login/begin", format="json").json()["publicKey"]

    response = browser.post(
        "/api/v1/auth/login/complete",
        {"credential": authenticator.get_json(options, "https://evil.example")},
        format="json",
    )

    assert response.status_code == 401


def test_standard_base64_as_the_spec_shows_is_accepted():
    import base64

    from tests.accounts.authenticator import unb64u

    authenticator = Authenticator()
    browser = APIClient()
    passkey_account(browser, "pk@example.com", authenticator)
    options = browser.post("/api/v1/auth/login/begin", format="json").json()["publicKey"]
    credential = authenticator.get_json(options, ORIGIN)
    credential["rawId"] = base64.b64encode(unb64u(credential["rawId"])).decode()
    for name in ("authenticatorData", "clientDataJSON", "signature", "userHandle"):
        credential["response"][name] = base64.b64encode(unb64u(credential["response"][name])).decode()

    assert browser.post("/api/v1/auth/login/complete", {"credential": credential}, format="json").status_code == 200


def test_a_malformed_credential_names_the_field():
    browser = APIClient()
    browser.post("/api/v1/auth/login/begin", format="json")

    response = browser.post("/api/v1/auth/login/complete", {"credential": {"id": "x"}}, format="json")

    assert response.status_code == 400
    assert any(e["field"].startswith("credential") for e in response.json()["errors"])


def test_done_when_register_add_a_passkey_sign_out_sign_in_with_it_and_create_an_api_key():
    from tests.accounts.conftest import register

    browser = APIClient(enforce_csrf_checks=True)
    register(browser, "person@example.com")
    authenticator = Authenticator()
    options = csrf_post(browser, "/api/v1/auth/register/begin").json()["publicKey"]
    added = csrf_post(
        browser, "/api/v1/auth/register/complete", {"credential": authenticator.create_json(options, ORIGIN)}
    )
    assert added.status_code == 200 and len(added.json()["account"]["passkeys"]) == 1
    assert csrf_post(browser, "/api/v1/auth/logout").status_code == 200

    assert passkey_sign_in(browser, authenticator).status_code == 200
    key = csrf_post(browser, "/api/v1/api-keys", {"name": "shop", "scopes": ["drafts:read", "drafts:write"]})

    assert key.status_code == 200
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {key.json()['key']}")
    assert agent.get("/api/v1/auth/me").json()["email"] == "person@example.com"


def sessions_of(user: User) -> int:
    return sum(s.get_decoded().get("_auth_user_id") == str(user.pk) for s in Session.objects.all())


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("counts", [False, True], ids=["synced passkey, no counter", "counting authenticator"])
def test_one_assertion_sent_four_times_at_once_signs_in_once(counts):
    """Synced passkeys keep no signature count, so the count cannot stop a replay: the
    challenge itself is used once, also by requests racing with copies of one session."""
    authenticator = Authenticator(counts=counts)
    passkey_account(APIClient(), "pk@example.com", authenticator)
    user = User.objects.get(email="pk@example.com")
    for trial in range(3):
        address = f"192.0.2.{trial + 1}"  # each trial within the per-address attempt limit
        browser = APIClient(REMOTE_ADDR=address)
        options = browser.post("/api/v1/auth/login/begin", format="json").json()["publicKey"]
        assertion = authenticator.get_json(options, ORIGIN)
        cookie = browser.cookies["sessionid"].value
        before = sessions_of(user)

        def replay(cookie=cookie, credential=assertion, address=address):
            client = APIClient(REMOTE_ADDR=address)
            client.cookies["sessionid"] = cookie
            return client.post("/api/v1/auth/login/complete", {"credential": credential}, format="json")

        answers = run_at_once(4, replay)

        shown = [a.content[:200] for a in answers]
        assert sorted(a.status_code for a in answers) == [200, 400, 400, 400], shown
        assert {a.json()["code"] for a in answers if a.status_code == 400} == {"challenge_expired"}, shown
        assert sessions_of(user) == before + 1


def test_used_challenges_are_kept_only_until_they_would_have_expired():
    authenticator = Authenticator()
    passkey_account(APIClient(), "pk@example.com", authenticator)
    assert passkey_sign_in(APIClient(), authenticator).status_code == 200
    assert UsedPasskeyChallenge.objects.count() == 2  # the registration's and the sign-in's

    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        assert passkey_sign_in(APIClient(), authenticator).status_code == 200

    assert UsedPasskeyChallenge.objects.count() == 1

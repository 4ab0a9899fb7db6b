"""Step-up: creating an API key, adding a passkey and turning off the authenticator app need a
second factor within STEP_UP_MINUTES (POST /auth/step-up or the dashboard's Confirm page);
each emails the owner what changed with an undo link and a lock link that works once."""

from __future__ import annotations

import re
import time

import pytest
import time_machine
from django.test import Client
from django_otp.oath import TOTP
from rest_framework.test import APIClient

from accounts.models import ApiKey, Passkey, TotpDevice, User
from notifications.emails import email_render
from notifications.models import EmailNotification
from tests.accounts.authenticator import Authenticator
from tests.accounts.conftest import PASSWORD, csrf_call, csrf_post, emailed_code, sign_in
from tests.accounts.test_passkeys import ORIGIN
from tests.accounts.test_totp import code_at, enable

pytestmark = pytest.mark.django_db

LATER = 6 * 60  # past STEP_UP_MINUTES (5)
KEY = {"name": "agent", "scopes": ["drafts:write"]}


def notice(kind: str) -> EmailNotification:
    return EmailNotification.objects.filter(kind="security_notice", context__notice=kind).latest("created_at")


def link_path(url: str) -> str:
    return url.split("testserver", 1)[-1] if "testserver" in url else re.sub(r"^https?://[^/]+", "", url)


def test_a_totp_account_steps_up_with_a_code_before_creating_a_key(registered):
    secret, _codes = enable(registered)  # turning the app on proves it: a key at once is fine
    assert csrf_post(registered, "/api/v1/api-keys", KEY).status_code == 200

    with time_machine.travel(time.time() + LATER):
        refused = csrf_post(registered, "/api/v1/api-keys", KEY)
        wrong = csrf_post(registered, "/api/v1/auth/step-up", {"code": "000000"})
    with time_machine.travel(time.time() + LATER + 31):
        stepped = csrf_post(registered, "/api/v1/auth/step-up", {"code": code_at(secret, time.time())})
        created = csrf_post(registered, "/api/v1/api-keys", KEY)

    assert refused.status_code == 403 and refused.json()["code"] == "step_up_required"
    assert wrong.status_code == 400 and wrong.json()["code"] == "invalid_code"
    assert stepped.status_code == 200 and stepped.json()["status"] == "steppedUp"
    assert created.status_code == 200 and ApiKey.objects.count() == 2


def test_an_account_without_a_second_factor_steps_up_by_signing_in_again(registered):
    assert csrf_post(registered, "/api/v1/api-keys", KEY).status_code == 200
    with time_machine.travel(time.time() + LATER):
        refused = csrf_post(registered, "/api/v1/api-keys", KEY)
        csrf_post(registered, "/api/v1/auth/logout")
        sign_in(registered, "merchant@example.com")
        created = csrf_post(registered, "/api/v1/api-keys", KEY)

    assert refused.status_code == 403 and refused.json()["code"] == "step_up_required"
    assert created.status_code == 200


def test_an_api_key_cannot_step_up(make_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key('drafts:write')}")

    response = client.post("/api/v1/auth/step-up", {"code": "123456"}, format="json")

    assert response.status_code == 403 and response.json()["code"] == "session_required"


def test_turning_off_the_app_needs_its_code_or_a_step_up_and_emails_a_lock_link(registered):
    secret, _codes = enable(registered)
    with time_machine.travel(time.time() + LATER):
        refused = csrf_post(registered, "/api/v1/auth/totp/disable")
        off = csrf_post(registered, "/api/v1/auth/totp/disable", {"code": code_at(secret, time.time())})

    assert refused.status_code == 403 and refused.json()["code"] == "step_up_required"
    assert off.status_code == 200 and not TotpDevice.objects.exists()
    email = notice("totp_disabled")
    subject, text, _html = email_render(email)
    assert subject == "Authenticator app turned off"
    assert "no longer required" in text and email.context["lock_url"] in text and "undo_url" not in email.context


def test_a_new_key_is_emailed_with_an_undo_link_that_revokes_it_once(registered):
    created = csrf_post(registered, "/api/v1/api-keys", KEY, HTTP_USER_AGENT="Firefox/140")
    email = notice("api_key_created")
    subject, text, _html = email_render(email)
    anyone = Client()

    page = anyone.get(link_path(email.context["undo_url"]))
    undone = anyone.post(link_path(email.context["undo_url"]))
    again = anyone.post(link_path(email.context["undo_url"]))

    assert created.status_code == 200
    assert subject == "An API key was created for your account"
    assert 'An API key named "agent" was created' in text and "Firefox/140" in text and "When:" in text
    assert email.context["undo_url"] in text and email.context["lock_url"] in text
    assert page.status_code == 200 and "Revoke the key" in page.content.decode()
    assert undone.status_code == 200 and ApiKey.objects.get().revoked_at is not None
    assert again.status_code == 409 and "used already" in again.content.decode()


def test_the_lock_link_ends_every_session_revokes_every_key_and_sign_in_waits_for_a_reset(registered):
    csrf_post(registered, "/api/v1/api-keys", KEY)
    lock = link_path(notice("api_key_created").context["lock_url"])
    anyone = Client()

    assert anyone.get(lock).status_code == 200 and User.objects.get().locked_at is None  # GET changes nothing
    locked = anyone.post(lock)
    again = anyone.post(lock)
    user = User.objects.get()

    assert locked.status_code == 200 and "The account is locked" in locked.content.decode()
    assert again.status_code == 409
    assert user.locked_at is not None and not user.has_usable_password()
    assert ApiKey.objects.get().revoked_at is not None
    assert registered.get("/api/v1/auth/me").status_code in (401, 403)
    refused = APIClient().post(
        "/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json"
    )
    assert refused.status_code == 401
    assert notice("account_locked").user == user

    fresh = APIClient()
    fresh.post("/api/v1/auth/password/forgot", {"email": "merchant@example.com"}, format="json")
    reset = fresh.post(
        "/api/v1/auth/password/forgot/complete",
        {"email": "merchant@example.com", "code": emailed_code("merchant@example.com"), "newPassword": PASSWORD + "!"},
        format="json",
    )
    assert reset.status_code == 200 and User.objects.get().locked_at is None
    sign_in(fresh, "merchant@example.com", PASSWORD + "!")


def test_a_forged_or_altered_link_is_refused():
    response = Client().get("/account/security-link/eyJ1IjoiMSJ9:1abc:forged")
    assert response.status_code == 400 and "does not work" in response.content.decode()


def test_the_dashboard_asks_to_confirm_then_returns_to_the_key_form(owner):
    device = TotpDevice.objects.create(user=owner, name="app", confirmed=True)
    browser = Client()
    browser.force_login(owner)  # signed in, but no second factor proved in this session

    sent = browser.post("/dashboard/api-keys/", {"name": "ci", "scopes": ["drafts:read"]})
    made_before = ApiKey.objects.exists()
    page = browser.get(sent["Location"])
    code = f"{TOTP(device.bin_key, step=30, t0=0, digits=6).token():06d}"
    confirmed = browser.post(sent["Location"], {"code": code, "next": "/dashboard/api-keys/"})
    issued = browser.post("/dashboard/api-keys/", {"name": "ci", "scopes": ["drafts:read"]})

    assert sent.status_code == 302 and sent["Location"].startswith("/dashboard/confirm?next=")
    assert not made_before
    assert page.status_code == 200 and "Confirm it" in page.content.decode()
    assert confirmed.status_code == 302 and confirmed["Location"] == "/dashboard/api-keys/"
    assert issued.status_code == 200 and ApiKey.objects.filter(user=owner).count() == 1


def test_a_new_passkey_is_emailed_with_an_undo_link_that_removes_it_once(registered):
    options = csrf_post(registered, "/api/v1/auth/register/begin").json()["publicKey"]
    credential = Authenticator().create_json(options, ORIGIN)
    csrf_post(registered, "/api/v1/auth/register/complete", {"credential": credential, "name": "Stranger"})
    email = notice("passkey_added")
    subject, text, _html = email_render(email)
    undo = link_path(email.context["undo_url"])

    removed = Client().post(undo)
    again = Client().post(undo)

    assert subject == "A passkey was added to your account" and 'named "Stranger"' in text
    assert removed.status_code == 200 and not Passkey.objects.exists()
    assert again.status_code == 409


def test_deleting_the_last_passkey_needs_a_step_up(registered):
    options = csrf_post(registered, "/api/v1/auth/register/begin").json()["publicKey"]
    credential = Authenticator().create_json(options, ORIGIN)
    csrf_post(registered, "/api/v1/auth/register/complete", {"credential": credential})
    added = notice("passkey_added")
    [passkey] = registered.get("/api/v1/auth/passkeys").json()
    with time_machine.travel(time.time() + LATER):
        refused = csrf_call(registered, "delete", f"/api/v1/auth/passkeys/{passkey['id']}")

    assert "undo_url" in added.context and "lock_url" in added.context
    assert refused.status_code == 403 and refused.json()["code"] == "step_up_required"

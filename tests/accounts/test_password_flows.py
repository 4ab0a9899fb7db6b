"""Password accounts: register with an emailed code, sign in in two steps, forgotten and
changed passwords."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.hashers import make_password
from django.core import mail
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import EmailCode, User
from notifications.services import emails_send_due
from tests.accounts.conftest import PASSWORD, csrf_post, emailed_code, sign_in

pytestmark = pytest.mark.django_db


def test_registration_emails_a_code_and_completing_it_signs_in(browser):
    started = browser.post(
        "/api/v1/auth/password/register", {"email": "New@Example.com", "password": PASSWORD}, format="json"
    )
    assert started.status_code == 200 and started.json()["status"] == "emailCodeSent"
    assert not User.objects.filter(email="new@example.com").exists()
    code = emailed_code("new@example.com")
    [message] = mail.outbox
    assert message.alternatives[0][1] == "text/html" and code in message.alternatives[0][0]

    done = browser.post("/api/v1/auth/password/register/complete", {"code": code}, format="json")

    assert done.status_code == 200
    body = done.json()
    assert body["status"] == "signedIn" and body["account"]["email"] == "new@example.com"
    me = browser.get("/api/v1/auth/me").json()
    assert me["authenticatedWith"] == "session" and me["sessionMethod"] == "password"
    assert me["id"] == str(User.objects.get(email="new@example.com").public_id)
    assert me["hasPassword"] is True and me["totpEnabled"] is False and me["passkeys"] == []


def test_the_code_is_stored_only_as_a_hash_and_the_outbox_forgets_it(browser):
    browser.post("/api/v1/auth/password/register", {"email": "a@example.com", "password": PASSWORD}, format="json")
    code = emailed_code("a@example.com")

    row = EmailCode.objects.get()
    assert code not in row.code_hash and len(row.code_hash) == 64
    from notifications.models import EmailNotification

    assert EmailNotification.objects.get(kind="email_code").context == {}


def test_a_wrong_code_is_refused_and_five_wrong_tries_end_the_code(browser):
    browser.post("/api/v1/auth/password/register", {"email": "a@example.com", "password": PASSWORD}, format="json")
    code = emailed_code("a@example.com")
    wrong = code[:-1] + ("A" if code[-1] != "A" else "B")

    answers = [
        browser.post("/api/v1/auth/password/register/complete", {"code": wrong}, format="json") for _ in range(5)
    ]
    late = browser.post("/api/v1/auth/password/register/complete", {"code": code}, format="json")

    assert {a.status_code for a in answers} == {400}
    assert answers[0].json()["code"] == "invalid_code" and answers[0].json()["errors"][0]["field"] == "code"
    assert late.status_code == 400  # the right code no longer works after five wrong tries
    assert not User.objects.filter(email="a@example.com").exists()


def test_an_expired_code_is_refused(browser):
    browser.post("/api/v1/auth/password/register", {"email": "a@example.com", "password": PASSWORD}, format="json")
    code = emailed_code("a@example.com")

    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        response = browser.post("/api/v1/auth/password/register/complete", {"code": code}, format="json")

    assert response.status_code == 400 and response.json()["code"] == "invalid_code"


def test_a_used_code_cannot_be_used_again(browser):
    browser.post("/api/v1/auth/password/register", {"email": "a@example.com", "password": PASSWORD}, format="json")
    code = emailed_code("a@example.com")
    assert browser.post("/api/v1/auth/password/register/complete", {"code": code}, format="json").status_code == 200
    again = APIClient().post("/api/v1/auth/password/register/complete", {"code": code}, format="json")

    assert again.status_code == 400


def test_a_weak_password_is_refused_naming_the_field(browser):
    response = browser.post(
        "/api/v1/auth/password/register", {"email": "a@example.com", "password": "password123"}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["code"] == "weak_password"
    assert {e["field"] for e in response.json()["errors"]} == {"password"}
    assert mail.outbox == [] and not EmailCode.objects.exists()


def test_sign_in_takes_the_password_then_an_emailed_code(registered):
    browser = APIClient(enforce_csrf_checks=True)

    first = browser.post(
        "/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json"
    )
    assert first.json()["status"] == "emailCodeSent"
    assert browser.get("/api/v1/auth/me").status_code in (401, 403)  # not signed in between the steps
    done = browser.post(
        "/api/v1/auth/password/login/complete", {"code": emailed_code("merchant@example.com")}, format="json"
    )

    assert done.status_code == 200 and done.json()["status"] == "signedIn"
    assert browser.get("/api/v1/auth/me").status_code == 200


def test_the_session_cookie_is_httponly_lax_and_rotated_at_sign_in(registered):
    browser = APIClient(enforce_csrf_checks=True)
    browser.post("/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json")
    before = browser.cookies["sessionid"].value

    sign_in_response = browser.post(
        "/api/v1/auth/password/login/complete", {"code": emailed_code("merchant@example.com")}, format="json"
    )

    cookie = sign_in_response.cookies["sessionid"]
    assert cookie.value != before
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    assert cookie["secure"]  # DEBUG is off in the tests, as in production


def test_a_wrong_password_and_an_unknown_address_answer_alike(registered):
    wrong = APIClient().post(
        "/api/v1/auth/password/login", {"email": "merchant@example.com", "password": "not-it-at-all-1"}, format="json"
    )
    unknown = APIClient().post(
        "/api/v1/auth/password/login", {"email": "nobody@example.com", "password": "not-it-at-all-1"}, format="json"
    )

    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()
    assert wrong.json()["code"] == "invalid_credentials"


def test_forgotten_password_resets_with_an_emailed_code_and_ends_every_session(registered):
    other_device = APIClient(enforce_csrf_checks=True)
    sign_in(other_device, "merchant@example.com")

    asked = APIClient().post("/api/v1/auth/password/forgot", {"email": "merchant@example.com"}, format="json")
    code = emailed_code("merchant@example.com")
    done = APIClient().post(
        "/api/v1/auth/password/forgot/complete",
        {"email": "merchant@example.com", "code": code, "newPassword": "copper-meadow-77-kite"},
        format="json",
    )

    assert asked.status_code == 200 and done.status_code == 200 and done.json()["status"] == "passwordReset"
    assert registered.get("/api/v1/auth/me").status_code in (401, 403)
    assert other_device.get("/api/v1/auth/me").status_code in (401, 403)
    sign_in(APIClient(), "merchant@example.com", "copper-meadow-77-kite")
    refused = APIClient().post(
        "/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json"
    )
    assert refused.status_code == 401


def test_a_reset_code_works_once(registered):
    APIClient().post("/api/v1/auth/password/forgot", {"email": "merchant@example.com"}, format="json")
    code = emailed_code("merchant@example.com")
    body = {"email": "merchant@example.com", "code": code, "newPassword": "copper-meadow-77-kite"}

    first = APIClient().post("/api/v1/auth/password/forgot/complete", body, format="json")
    second = APIClient().post(
        "/api/v1/auth/password/forgot/complete", body | {"newPassword": "another-copper-88-kite"}, format="json"
    )

    assert first.status_code == 200 and second.status_code == 400


def test_changing_the_password_needs_the_current_one_and_ends_other_sessions(registered):
    other_device = APIClient(enforce_csrf_checks=True)
    sign_in(other_device, "merchant@example.com")

    wrong = csrf_post(
        registered,
        "/api/v1/auth/password/change",
        {"currentPassword": "not-the-password-9", "newPassword": "copper-meadow-77-kite"},
    )
    changed = csrf_post(
        registered,
        "/api/v1/auth/password/change",
        {"currentPassword": PASSWORD, "newPassword": "copper-meadow-77-kite"},
    )

    assert wrong.status_code == 400 and wrong.json()["errors"][0]["field"] == "currentPassword"
    assert changed.status_code == 200 and changed.json()["status"] == "passwordChanged"
    assert registered.get("/api/v1/auth/me").status_code == 200  # this session goes on
    assert other_device.get("/api/v1/auth/me").status_code in (401, 403)
    emails_send_due()
    assert "Your password was changed" in [m.subject for m in mail.outbox]


def test_an_older_password_hash_is_upgraded_to_argon2_at_sign_in(settings, browser):
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.Argon2PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    ]
    user = User.objects.create_user("old@example.com")
    user.password = make_password(PASSWORD, hasher="pbkdf2_sha256")
    user.save()

    sign_in(browser, "old@example.com")

    user.refresh_from_db()
    assert user.password.startswith("argon2$argon2id$")


def test_argon2_is_the_first_hasher_in_production_settings():
    import importlib

    import config.settings

    production = importlib.reload(config.settings)
    assert production.PASSWORD_HASHERS[0] == "django.contrib.auth.hashers.Argon2PasswordHasher"


def test_ended_codes_and_the_password_hash_they_carried_are_purged_after_a_day(browser):
    from accounts.codes import email_codes_purge
    from accounts.tasks import purge_email_codes

    browser.post("/api/v1/auth/password/register", {"email": "a@example.com", "password": PASSWORD}, format="json")
    assert EmailCode.objects.get().payload["passwordHash"]
    assert email_codes_purge() == 0  # still alive

    with time_machine.travel(timezone.now() + timedelta(days=1, minutes=11)):
        assert purge_email_codes() == 1

    assert not EmailCode.objects.exists()

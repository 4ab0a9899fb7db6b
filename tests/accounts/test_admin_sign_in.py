"""The admin signs in through the account's own sign-in: password, then the account's second
factor, with the API's attempt limits and lockout email. A password alone never opens it, and
staff without a second factor are told to set one up."""

from __future__ import annotations

import time
from urllib.parse import quote

import pytest
import time_machine
from django.core import mail
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import User
from notifications.services import emails_send_due
from tests.accounts.authenticator import Authenticator
from tests.accounts.conftest import PASSWORD, emailed_code, register
from tests.accounts.test_passkeys import passkey_account, passkey_sign_in
from tests.accounts.test_totp import code_at, enable

pytestmark = pytest.mark.django_db

OPERATOR = "operator@example.com"


def staff(email: str = OPERATOR, *, app: bool) -> str | None:
    """A staff account (password, and the authenticator app if `app`); returns the app's secret."""
    browser = APIClient()
    register(browser, email)
    secret = enable(browser)[0] if app else None
    User.objects.filter(email=email).update(is_staff=True, is_superuser=True)
    emails_send_due()
    mail.outbox.clear()
    return secret


def test_the_admin_signs_in_with_the_password_then_the_app_code_and_not_with_the_password_alone():
    secret = staff(app=True)
    now = time.time() + 60  # the next time step: the code that enabled the app is used
    browser = Client()
    with time_machine.travel(now, tick=False):
        asked = browser.get("/admin/")
        login = browser.get(asked["Location"])
        assert asked.status_code == 302 and asked["Location"] == "/admin/login/?next=/admin/"
        assert login.status_code == 302 and login["Location"] == f"/account/sign-in?next={quote('/admin/', safe='')}"

        # Django's own admin form, with the right password: no session comes of it.
        posted = browser.post("/admin/login/?next=/admin/", {"username": OPERATOR, "password": PASSWORD})
        assert posted.status_code == 302 and posted["Location"].startswith("/account/sign-in")
        assert browser.get("/admin/").status_code == 302
        assert browser.get("/api/v1/auth/me").status_code in (401, 403)

        # The password step of the sign-in alone does not open the admin either.
        step = browser.post("/account/sign-in", {"email": OPERATOR, "password": PASSWORD, "next": "/admin/"})
        assert step.status_code == 302 and step["Location"].startswith("/account/sign-in/code")
        assert browser.get("/admin/")["Location"] == "/admin/login/?next=/admin/"
        assert browser.get("/api/v1/auth/me").status_code in (401, 403)

        done = browser.post("/account/sign-in/code", {"code": code_at(secret, now), "next": "/admin/"})
        emails_send_due()  # no emailed code with an app; the owner hears of the new browser, as from the API

    assert done.status_code == 302 and done["Location"] == "/admin/"
    index = browser.get("/admin/")
    assert index.status_code == 200 and b"Site administration" in index.content
    assert browser.get("/admin/accounts/user/").status_code == 200
    assert browser.get("/admin/password_change/")["Location"] == "/dashboard/security/"  # the account's own change
    assert [m.subject for m in mail.outbox] == ["New sign-in to your account"]


def test_guessing_the_admin_password_hits_the_sign_in_limits_and_the_owner_is_emailed(settings):
    # Every guess inside one of the limits' minute windows: the clock held at its start.
    with time_machine.travel((time.time() // 60 + 1) * 60 + 1, tick=False):
        guessed_within_one_minute(settings)


def guessed_within_one_minute(settings) -> None:
    staff(app=True)
    address = "203.0.113.9"
    browser = Client(REMOTE_ADDR=address)
    sign_in = browser.get("/admin/login/?next=/admin/")["Location"]
    limit = settings.AUTH_ATTEMPTS_PER_MINUTE

    answers = [
        browser.post(sign_in, {"email": OPERATOR, "password": f"wrong-guess-{n}", "next": "/admin/"})
        for n in range(limit + 2)
    ]
    right = browser.post(sign_in, {"email": OPERATOR, "password": PASSWORD, "next": "/admin/"})
    api = APIClient(REMOTE_ADDR=address).post(
        "/api/v1/auth/password/login", {"email": OPERATOR, "password": PASSWORD}, format="json"
    )

    assert [a.status_code for a in answers] == [401] * limit + [429, 429]
    assert right.status_code == 429 and api.status_code == 429  # the API's own limit: one sign-in
    assert browser.get("/admin/").status_code == 302

    # Guesses from many addresses fill the account's pool for unknown browsers: the same
    # lockout email as the API's.
    pool = settings.AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE
    others = [Client(REMOTE_ADDR=f"198.51.100.{n // limit + 1}") for n in range(pool)]
    spread = [c.post(sign_in, {"email": OPERATOR, "password": "wrong", "next": "/admin/"}) for c in others]
    assert spread[-1].status_code == 429
    emails_send_due()
    assert [m.subject for m in mail.outbox] == ["Sign-in attempts paused on your account"]


def test_staff_without_a_second_factor_are_refused_and_told_to_set_one_up():
    staff(app=False)
    browser = Client()
    browser.post("/account/sign-in", {"email": OPERATOR, "password": PASSWORD, "next": "/admin/"})
    done = browser.post("/account/sign-in/code", {"code": emailed_code(OPERATOR), "next": "/admin/"})
    assert done["Location"] == "/admin/"

    refused = browser.get(browser.get("/admin/")["Location"])

    assert refused.status_code == 403
    page = refused.content.decode()
    assert "Staff accounts need a second factor" in page and "authenticator app" in page
    assert 'href="/dashboard/security/"' in page
    assert browser.get("/admin/accounts/user/").status_code == 302


def test_a_session_from_before_the_app_was_turned_on_must_sign_in_again():
    staff(app=False)
    browser = APIClient(enforce_csrf_checks=True)
    browser.post("/api/v1/auth/password/login", {"email": OPERATOR, "password": PASSWORD}, format="json")
    browser.post("/api/v1/auth/password/login/complete", {"code": emailed_code(OPERATOR)}, format="json")
    enable(browser)

    refused = browser.get("/admin/login/")

    assert refused.status_code == 403 and "Sign out and sign in again" in refused.content.decode()


def test_a_passkey_sign_in_opens_the_admin():
    authenticator = Authenticator()  # user-verified: the device and its PIN or biometric
    passkey_account(APIClient(), OPERATOR, authenticator)
    User.objects.filter(email=OPERATOR).update(is_staff=True)
    browser = APIClient()

    assert passkey_sign_in(browser, authenticator).status_code == 200
    assert browser.get("/admin/").status_code == 200


def test_an_account_that_is_not_staff_is_told_it_has_no_access(registered):
    refused = registered.get("/admin/login/?next=/admin/")

    assert refused.status_code == 403 and "no access to the admin" in refused.content.decode()

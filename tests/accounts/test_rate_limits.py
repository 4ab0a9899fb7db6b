"""Guessing is limited without handing anyone a way to lock the owner out: wrong passwords
and codes count per (account, IP address), per IP address and, from browsers that never
signed in to the account, per account, while the owner's own browser keeps a budget of its
own. Requests that email an address are capped per address, purpose and hour, and answer the
same whether or not an email went out."""

from __future__ import annotations

import logging
import threading
import time

import pytest
import time_machine
from django.core import mail
from rest_framework.test import APIClient

from notifications.services import emails_send_due
from tests.accounts.conftest import PASSWORD, csrf_post, emailed_code, register, sign_in
from tests.concurrency import run_at_once

pytestmark = pytest.mark.django_db

VICTIM = "merchant@example.com"
ATTACKER = "203.0.113.7"


def _guess(email: str = VICTIM, ip: str = ATTACKER, password: str = "guess-guess-guess"):
    return APIClient(REMOTE_ADDR=ip).post(
        "/api/v1/auth/password/login", {"email": email, "password": password}, format="json"
    )


def _reset_request(ip: str, email: str = VICTIM):
    return APIClient(REMOTE_ADDR=ip).post("/api/v1/auth/password/forgot", {"email": email}, format="json")


@pytest.fixture
def owners_browser(registered) -> APIClient:
    """The owner's browser: it signed in before (its device cookie is known), now signed out."""
    assert csrf_post(registered, "/api/v1/auth/logout").status_code == 200
    return registered


def _emails_to(address: str) -> list[str]:
    emails_send_due()
    return [m.subject for m in mail.outbox if address in m.to]


def test_an_attacker_at_eleven_a_minute_from_one_address_is_stopped_and_the_owner_is_not(owners_browser):
    answers = [_guess() for _ in range(11)]

    assert [a.status_code for a in answers] == [401] * 10 + [429]
    assert answers[10].json()["code"] == "too_many_attempts"
    assert 1 <= int(answers[10]["Retry-After"]) <= 60
    # The owner signs in, from the browser used before and from one never seen, elsewhere.
    assert sign_in(owners_browser, VICTIM).json()["status"] == "signedIn"
    assert sign_in(APIClient(REMOTE_ADDR="198.51.100.20"), VICTIM).json()["status"] == "signedIn"
    assert "Sign-in attempts paused on your account" not in _emails_to(VICTIM)


def test_attackers_at_many_addresses_pause_unknown_browsers_only_and_the_owner_is_told(owners_browser, caplog):
    caplog.set_level(logging.WARNING, logger="accounts.security")
    answers = [_guess(ip=f"203.0.113.{n}") for n in range(32)]

    assert [a.status_code for a in answers] == [401] * 30 + [429, 429]
    # A browser that never signed in to the account waits, even with the right password...
    assert _guess(ip="198.51.100.20", password=PASSWORD).status_code == 429
    # ...the owner's own browser does not.
    assert sign_in(owners_browser, VICTIM).json()["status"] == "signedIn"
    assert _emails_to(VICTIM).count("Sign-in attempts paused on your account") == 1
    assert "Attempt limit reached" in caplog.text and PASSWORD not in caplog.text and "guess" not in caplog.text


def test_the_owners_browser_has_its_own_budget_and_cannot_be_borrowed_by_another_account(owners_browser):
    for n in range(31):
        _guess(ip=f"203.0.113.{n}")
    # A device cookie known to another account is no key to this one.
    other = APIClient(REMOTE_ADDR="198.51.100.30", enforce_csrf_checks=True)
    register(other, "attacker@example.com")
    csrf_post(other, "/api/v1/auth/logout")

    assert (
        other.post("/api/v1/auth/password/login", {"email": VICTIM, "password": PASSWORD}, format="json").status_code
        == 429
    )
    wrong = [
        owners_browser.post("/api/v1/auth/password/login", {"email": VICTIM, "password": "not-it-9-9-9"}, format="json")
        for _ in range(11)
    ]
    assert [w.status_code for w in wrong] == [401] * 10 + [429]  # still limited, on its own


def test_a_right_password_gives_its_count_back(owners_browser):
    answers = [_guess() for _ in range(9)] + [_guess(password=PASSWORD)] + [_guess()]

    assert [a.status_code for a in answers] == [401] * 9 + [200, 401]


def test_one_address_guessing_across_accounts_hits_the_limit(db):
    answers = [_guess(f"user{n}@example.com") for n in range(21)]

    assert [a.status_code for a in answers] == [401] * 20 + [429]


def test_code_guessing_hits_the_limit(browser):
    browser.post("/api/v1/auth/password/register", {"email": "a@example.com", "password": PASSWORD}, format="json")
    answers = [
        browser.post("/api/v1/auth/password/register/complete", {"code": "000000"}, format="json").status_code
        for _ in range(11)
    ]

    assert answers == [400] * 10 + [429]


def test_reset_requests_for_a_victim_send_a_few_emails_answer_alike_and_block_no_sign_in(owners_browser):
    answers = [_reset_request(f"203.0.113.{n}") for n in range(11)]

    assert {a.status_code for a in answers} == {200} and len({str(a.json()) for a in answers}) == 1
    assert [s.split(":")[0] for s in _emails_to(VICTIM)] == ["Your password reset code"] * 5
    # Sign-in and its emailed code still work, from a browser never seen too.
    assert sign_in(APIClient(REMOTE_ADDR="198.51.100.20"), VICTIM).json()["status"] == "signedIn"
    # The owner's browser still gets a reset code of its own, and it works.
    assert owners_browser.post("/api/v1/auth/password/forgot", {"email": VICTIM}, format="json").status_code == 200
    done = owners_browser.post(
        "/api/v1/auth/password/forgot/complete",
        {"email": VICTIM, "code": emailed_code(VICTIM), "newPassword": "copper-meadow-77-kite"},
        format="json",
    )
    assert done.status_code == 200 and done.json()["status"] == "passwordReset"


def test_reset_requests_for_an_address_without_an_account_are_capped_alike(db):
    answers = [_reset_request(f"203.0.113.{n}", email="nobody@example.com") for n in range(11)]

    assert {a.status_code for a in answers} == {200}
    assert _emails_to("nobody@example.com") == ["Password reset requested"] * 5


def test_registrations_refused_for_a_weak_password_use_up_no_email(browser):
    for _ in range(6):
        weak = browser.post(
            "/api/v1/auth/password/register", {"email": "a@example.com", "password": "password123"}, format="json"
        )
        assert weak.status_code == 400
    browser.post("/api/v1/auth/password/register", {"email": "a@example.com", "password": PASSWORD}, format="json")

    assert [s.split(":")[0] for s in _emails_to("a@example.com")] == ["Your sign-up code"]


def test_one_address_asking_for_many_emails_is_refused(db):
    answers = [_reset_request(ATTACKER, email=f"user{n}@example.com").status_code for n in range(11)]

    assert answers == [200] * 10 + [429]


def test_guessing_reset_codes_never_holds_up_a_sign_in(owners_browser):
    # Every guess inside one of the limits' minute windows: the clock held at its start.
    with time_machine.travel((time.time() // 60 + 1) * 60 + 1, tick=False):
        _reset_request("198.51.100.9")
        answers = [
            APIClient(REMOTE_ADDR=f"203.0.113.{n}").post(
                "/api/v1/auth/password/forgot/complete",
                {"email": VICTIM, "code": "00000-00000", "newPassword": "copper-meadow-77-kite"},
                format="json",
            )
            for n in range(31)
        ]

        assert [a.status_code for a in answers][-1] == 429
        assert sign_in(APIClient(REMOTE_ADDR="198.51.100.20"), VICTIM).json()["status"] == "signedIn"


def test_behind_a_trusted_proxy_each_client_address_has_its_own_budget(db, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}

    def guess(n: int, client: str):
        return APIClient(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=client).post(
            "/api/v1/auth/password/login",
            {"email": f"u{n}@example.com", "password": "guess-guess-guess"},
            format="json",
        )

    first = [guess(n, "198.51.100.1").status_code for n in range(21)]
    other = guess(99, "198.51.100.2")

    assert first[-1] == 429 and other.status_code == 401


def test_without_a_trusted_proxy_a_forged_forwarded_for_changes_nothing(db):
    answers = [
        APIClient(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
        .post("/api/v1/auth/password/login", {"email": f"u{n}@example.com", "password": "guess-guess"}, format="json")
        .status_code
        for n in range(21)
    ]

    assert answers[-1] == 429


@pytest.mark.django_db(transaction=True)
def test_sixty_guesses_at_once_from_sixty_addresses_let_exactly_the_accounts_limit_through(settings):
    """Counting is one atomic step per guess (count, then compare), so guesses arriving together
    cannot slip past the account's pool between another's count and its check."""
    while time.time() % 60 > 45:  # not across the minute's boundary, where a new window opens
        time.sleep(1)
    addresses = iter(f"203.0.113.{n}" for n in range(60))
    lock = threading.Lock()

    def guess() -> int:
        with lock:
            ip = next(addresses)
        return _guess(email="nobody-yet@example.com", ip=ip).status_code

    statuses = run_at_once(60, guess)

    limit = settings.AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE
    assert sorted(statuses) == [401] * limit + [429] * (60 - limit)

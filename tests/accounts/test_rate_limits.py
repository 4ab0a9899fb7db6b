"""Guessing is limited: login, emailed-code and TOTP attempts, 10 a minute per account and
per IP, then 429 with Retry-After; the owner is emailed once when the account locks."""

from __future__ import annotations

import logging

import pytest
from django.core import mail
from rest_framework.test import APIClient

from notifications.services import emails_send_due
from tests.accounts.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def _guess(email: str, ip: str = "203.0.113.7"):
    return APIClient(REMOTE_ADDR=ip).post(
        "/api/v1/auth/password/login", {"email": email, "password": "guess-guess-guess"}, format="json"
    )


def test_password_guessing_on_one_account_hits_the_limit_and_the_owner_is_told(registered, caplog):
    caplog.set_level(logging.WARNING, logger="accounts.security")
    answers = [_guess("merchant@example.com", ip=f"203.0.113.{n}") for n in range(12)]

    assert [a.status_code for a in answers] == [401] * 10 + [429, 429]
    assert answers[10].json()["code"] == "too_many_attempts"
    assert 1 <= int(answers[10]["Retry-After"]) <= 60
    # Even the right password waits now.
    right = APIClient().post(
        "/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json"
    )
    assert right.status_code == 429
    emails_send_due()
    assert [m.subject for m in mail.outbox] == ["Sign-in attempts paused on your account"]
    assert "Attempt limit reached" in caplog.text and PASSWORD not in caplog.text and "guess" not in caplog.text


def test_one_address_guessing_across_accounts_hits_the_limit(db):
    answers = [_guess(f"user{n}@example.com") for n in range(11)]

    assert [a.status_code for a in answers][-1] == 429


def test_code_guessing_hits_the_limit(browser):
    browser.post("/api/v1/auth/password/register", {"email": "a@example.com", "password": PASSWORD}, format="json")
    answers = [
        browser.post("/api/v1/auth/password/register/complete", {"code": "000000"}, format="json").status_code
        for _ in range(10)
    ]

    assert answers[-1] == 429 and set(answers[:8]) == {400}


def test_behind_a_trusted_proxy_each_client_address_has_its_own_budget(db, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}

    def guess(n: int, client: str):
        return APIClient(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=client).post(
            "/api/v1/auth/password/login",
            {"email": f"u{n}@example.com", "password": "guess-guess-guess"},
            format="json",
        )

    first = [guess(n, "198.51.100.1").status_code for n in range(11)]
    other = guess(99, "198.51.100.2")

    assert first[-1] == 429 and other.status_code == 401


def test_without_a_trusted_proxy_a_forged_forwarded_for_changes_nothing(db):
    answers = [
        APIClient(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
        .post("/api/v1/auth/password/login", {"email": f"u{n}@example.com", "password": "guess-guess"}, format="json")
        .status_code
        for n in range(11)
    ]

    assert answers[-1] == 429

"""No user enumeration: registering, signing in and asking for a reset answer the same
status and body, in the same time bracket, for addresses with and without an account."""

from __future__ import annotations

import statistics
import time

import pytest
from rest_framework.test import APIClient

from accounts.models import User

pytestmark = pytest.mark.django_db

KNOWN, UNKNOWN = "known@example.com", "unknown@example.com"


@pytest.fixture
def argon2(settings):
    # The production hasher: its cost is what an attacker would time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]
    settings.AUTH_ATTEMPTS_PER_MINUTE = 1000
    User.objects.create_user(KNOWN, "violet-harbor-42-lantern")


def _timed(path: str, body: dict) -> tuple[int, dict, float]:
    started = time.perf_counter()
    response = APIClient().post(path, body, format="json")
    return response.status_code, response.json(), time.perf_counter() - started


CASES = {
    "register": ("/api/v1/auth/password/register", {"password": "copper-meadow-77-kite"}),
    "login": ("/api/v1/auth/password/login", {"password": "wrong-guess-12345"}),
    "forgot": ("/api/v1/auth/password/forgot", {}),
    "passkey-register": ("/api/v1/auth/register/begin", {}),
}


@pytest.mark.parametrize("case", CASES)
def test_known_and_unknown_addresses_get_the_same_answer_in_the_same_time(argon2, case):
    path, extra = CASES[case]
    known, unknown = [], []
    for _ in range(7):  # interleaved, so machine load hits both alike
        known.append(_timed(path, {"email": KNOWN, **extra}))
        unknown.append(_timed(path, {"email": UNKNOWN, **extra}))

    assert {(s, str(b)) for s, b, _ in known} == {(s, str(b)) for s, b, _ in unknown}
    fast, slow = sorted([statistics.median(t for *_, t in known), statistics.median(t for *_, t in unknown)])
    assert slow - fast < max(0.05, fast), (case, fast, slow)


def test_a_reset_for_an_address_without_an_account_tells_that_address_and_sends_no_code(db):
    from django.core import mail

    from notifications.services import emails_send_due

    APIClient().post("/api/v1/auth/password/forgot", {"email": UNKNOWN}, format="json")
    emails_send_due()

    [message] = mail.outbox
    assert message.to == [UNKNOWN] and message.subject == "Password reset requested"
    assert "there is no account" in message.body

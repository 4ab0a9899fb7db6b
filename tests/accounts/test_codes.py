"""Emailed codes outlast a year of guessing: 2**50 codes of ten characters, each code dead
after a few wrong tries, guesses and codes capped per account. The arithmetic is the one
docs/accounts.md states, computed here from the generator and the settings."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts.codes import code_make
from tests.accounts.conftest import CODE_RE, PASSWORD, emailed_code

MINUTES_A_YEAR = 365 * 24 * 60
HOURS_A_YEAR = 365 * 24


def _keyspace_of_the_generator(samples: int = 4000) -> int:
    codes = [code_make() for _ in range(samples)]
    assert all(CODE_RE.fullmatch(code) for code in codes)
    raw = [code.replace("-", "") for code in codes]
    lengths = {len(r) for r in raw}
    alphabet = set("".join(raw))
    assert len(lengths) == 1 and len(set(codes)) == samples
    return len(alphabet) ** lengths.pop()


def test_a_code_is_ten_characters_of_32_that_cannot_be_mistaken_for_one_another():
    keyspace = _keyspace_of_the_generator()

    assert keyspace == 32**10 == 2**50
    assert not set("ILOU") & set("".join(code_make() for _ in range(1000)))


def test_a_year_of_guessing_at_the_allowed_rates_has_under_a_one_in_a_million_chance(settings):
    keyspace = _keyspace_of_the_generator()
    # Every guess at one account's code, from every browser but the owner's, goes through
    # the account's pool, per action (a reset code, or a sign-in or registration code).
    guesses_by_rate = settings.AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE * MINUTES_A_YEAR
    # And no more than a code's tries for each code emailed.
    guesses_by_codes = settings.AUTH_EMAIL_CODE_MAX_TRIES * settings.AUTH_CODE_EMAILS_PER_HOUR * HOURS_A_YEAR

    assert guesses_by_rate / keyspace < 1e-6
    assert guesses_by_codes / keyspace < 1e-6
    assert (guesses_by_rate, guesses_by_codes) == (15_768_000, 219_000)  # the figures docs/accounts.md gives


@pytest.mark.django_db
def test_a_reset_code_dies_after_five_wrong_tries(registered):
    APIClient().post("/api/v1/auth/password/forgot", {"email": "merchant@example.com"}, format="json")
    code = emailed_code("merchant@example.com")
    wrong = code[:-1] + ("A" if code[-1] != "A" else "B")
    body = {"email": "merchant@example.com", "newPassword": "copper-meadow-77-kite"}

    answers = [
        APIClient().post("/api/v1/auth/password/forgot/complete", body | {"code": wrong}, format="json")
        for _ in range(5)
    ]
    late = APIClient().post("/api/v1/auth/password/forgot/complete", body | {"code": code}, format="json")

    assert [a.status_code for a in answers] == [400] * 5 and late.status_code == 400
    assert late.json()["code"] == "invalid_code"


@pytest.mark.django_db
def test_a_code_typed_in_lower_case_with_a_space_and_look_alike_letters_works(browser):
    browser.post("/api/v1/auth/password/register", {"email": "a@example.com", "password": PASSWORD}, format="json")
    code = emailed_code("a@example.com")
    typed = code.lower().replace("-", " ").replace("0", "o").replace("1", "l")

    done = browser.post("/api/v1/auth/password/register/complete", {"code": f" {typed} "}, format="json")

    assert done.status_code == 200 and done.json()["status"] == "signedIn"

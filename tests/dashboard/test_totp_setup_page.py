"""Setting up the authenticator app from the Security page forgives a mistyped code: the key
shown stays the key, the page says to try again, and only the explicit "new key" button
replaces it."""

from __future__ import annotations

import re
import time
from base64 import b32decode

import pytest
import time_machine
from django.test import Client
from django_otp.oath import TOTP

from accounts.models import TotpDevice
from tests.conftest import stepped_up

pytestmark = pytest.mark.django_db


def shown_key(page: str) -> str:
    found = re.search(r'<p class="mono" id="totp-key">([A-Z2-7]+)</p>', page)
    assert found, "the page shows the key to type by hand"
    return found.group(1)


def code_for(key: str, at: float) -> str:
    totp = TOTP(b32decode(key + "=" * (-len(key) % 8)), step=30, t0=0, digits=6)
    totp.time = at
    return f"{totp.token():06d}"


def wrong_code(key: str, at: float) -> str:
    right = {code_for(key, at + step * 30) for step in (-1, 0, 1)}
    return next(c for c in ("000000", "111111", "222222", "333333") if c not in right)


@pytest.fixture
def browser(owner) -> Client:
    return stepped_up(Client(), owner)


def test_a_mistyped_code_keeps_the_key_and_the_next_right_code_turns_the_app_on(browser, owner):
    key = shown_key(browser.post("/dashboard/security/", {"action": "totp_setup"}).content.decode())

    wrong = browser.post("/dashboard/security/", {"action": "totp_enable", "code": wrong_code(key, time.time())})
    page = wrong.content.decode()
    assert wrong.status_code == 200
    assert shown_key(page) == key  # the same key, still on the page
    assert "try again" in page.lower() or "enter it" in page.lower()
    assert "The code is wrong, already used or out of time." not in page
    reloaded = browser.get("/dashboard/security/").content.decode()
    assert shown_key(reloaded) == key  # a reload keeps it too
    again = browser.post("/dashboard/security/", {"action": "totp_setup"}).content.decode()
    assert shown_key(again) == key  # "Set up" once more does not replace a key already scanned

    with time_machine.travel(time.time() + 2):  # django-otp waits a second after a wrong code
        right = browser.post("/dashboard/security/", {"action": "totp_enable", "code": code_for(key, time.time())})

    assert 'id="recovery-codes"' in right.content.decode()
    assert TotpDevice.objects.get(user=owner).confirmed


def test_a_new_key_is_a_separate_explicit_action_and_the_old_key_stops_working(browser, owner):
    first = shown_key(browser.post("/dashboard/security/", {"action": "totp_setup"}).content.decode())
    page = browser.get("/dashboard/security/").content.decode()
    assert 'value="totp_renew"' in page and "Start again with a new key" in page

    second = shown_key(browser.post("/dashboard/security/", {"action": "totp_renew"}).content.decode())
    stale = browser.post("/dashboard/security/", {"action": "totp_enable", "code": code_for(first, time.time())})

    assert second != first
    assert shown_key(stale.content.decode()) == second
    assert not TotpDevice.objects.get(user=owner).confirmed

"""TOTP with django-otp: setup, enable and disable with a code, replay refused (also when
two requests race), one step of drift, recovery codes, and the second sign-in step."""

from __future__ import annotations

import threading
import time
from base64 import b32decode

import pytest
import time_machine
from django.core import mail
from django_otp.oath import TOTP
from rest_framework.test import APIClient

from accounts.models import RecoveryCode
from tests.accounts.conftest import PASSWORD, csrf_post, register
from tests.conftest import stepped_up

pytestmark = pytest.mark.django_db


def code_at(secret: str, at: float) -> str:
    totp = TOTP(b32decode(secret + "=" * (-len(secret) % 8)), step=30, t0=0, digits=6)
    totp.time = at
    return f"{totp.token():06d}"


def setup(client) -> str:
    response = csrf_post(client, "/api/v1/auth/totp/setup")
    assert response.status_code == 200, response.content
    return response.json()["secret"]


def enable(client) -> tuple[str, list[str]]:
    secret = setup(client)
    response = csrf_post(client, "/api/v1/auth/totp/enable", {"code": code_at(secret, time.time())})
    assert response.status_code == 200, response.content
    return secret, response.json()["recoveryCodes"]


def test_setup_gives_an_otpauth_uri_and_a_qr_code(registered):
    body = csrf_post(registered, "/api/v1/auth/totp/setup").json()

    assert body["otpauthUri"].startswith("otpauth://totp/") and f"secret={body['secret']}" in body["otpauthUri"]
    assert body["qrSvg"].startswith("<svg") and "</svg>" in body["qrSvg"]
    assert registered.get("/api/v1/auth/me").json()["totpEnabled"] is False


def test_enabling_needs_a_valid_code_and_returns_ten_single_use_recovery_codes(registered):
    secret = setup(registered)
    wrong = csrf_post(registered, "/api/v1/auth/totp/enable", {"code": "000000"})
    with time_machine.travel(time.time() + 2):  # django-otp waits a second after a wrong code
        right = csrf_post(registered, "/api/v1/auth/totp/enable", {"code": code_at(secret, time.time())})

    assert wrong.status_code == 400 and wrong.json()["code"] == "invalid_code"
    assert right.status_code == 200
    codes = right.json()["recoveryCodes"]
    assert len(codes) == len(set(codes)) == 10
    assert not any(RecoveryCode.objects.filter(code_hash__contains=c.replace("-", "")) for c in codes)
    assert registered.get("/api/v1/auth/me").json()["totpEnabled"] is True


def test_password_sign_in_then_asks_for_the_app_code_and_refuses_its_replay(registered):
    secret, _ = enable(registered)
    mail.outbox.clear()
    now = time.time() + 60  # the next window: the enable code was used
    with time_machine.travel(now, tick=False):
        first = APIClient()
        step = first.post(
            "/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json"
        )
        code = code_at(secret, now)
        done = first.post("/api/v1/auth/password/login/complete", {"code": code}, format="json")
        replay = APIClient()
        replay.post(
            "/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json"
        )
        again = replay.post("/api/v1/auth/password/login/complete", {"code": code}, format="json")

    assert step.json()["status"] == "totpRequired" and mail.outbox == []  # no emailed code with an app
    assert done.status_code == 200 and done.json()["status"] == "signedIn"
    assert again.status_code == 400


def test_one_step_of_clock_drift_is_tolerated_but_not_two(registered):
    secret, _ = enable(registered)
    now = time.time() + 120
    with time_machine.travel(now, tick=False):
        late_by_one = APIClient()
        late_by_one.post(
            "/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json"
        )
        ok = late_by_one.post(
            "/api/v1/auth/password/login/complete", {"code": code_at(secret, now - 30)}, format="json"
        )
    with time_machine.travel(now + 300, tick=False):
        late_by_two = APIClient()
        late_by_two.post(
            "/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json"
        )
        refused = late_by_two.post(
            "/api/v1/auth/password/login/complete", {"code": code_at(secret, now + 300 - 60)}, format="json"
        )

    assert ok.status_code == 200 and refused.status_code == 400


def test_a_recovery_code_signs_in_once(registered):
    _, codes = enable(registered)

    first = APIClient()
    first.post("/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json")
    used = first.post("/api/v1/auth/password/login/complete", {"code": codes[0]}, format="json")
    second = APIClient()
    second.post("/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json")
    reused = second.post("/api/v1/auth/password/login/complete", {"code": codes[0]}, format="json")

    assert used.status_code == 200 and reused.status_code == 400


def test_disabling_needs_a_valid_code(registered):
    secret, _ = enable(registered)
    stepped_up(registered)
    wrong = csrf_post(registered, "/api/v1/auth/totp/disable", {"code": "123456"})
    with time_machine.travel(time.time() + 62, tick=False):
        right = csrf_post(registered, "/api/v1/auth/totp/disable", {"code": code_at(secret, time.time())})

    assert wrong.status_code == 400
    assert right.status_code == 200 and right.json() == {"totpEnabled": False}
    assert registered.get("/api/v1/auth/me").json()["totpEnabled"] is False


@pytest.mark.django_db(transaction=True)
def test_two_requests_racing_with_the_same_code_let_only_one_through(browser):
    register(browser, "racer@example.com")
    secret, _ = enable(browser)
    now = time.time() + 60
    clients = []
    for _ in range(2):
        client = APIClient()
        client.post("/api/v1/auth/password/login", {"email": "racer@example.com", "password": PASSWORD}, format="json")
        clients.append(client)
    code = code_at(secret, now)
    barrier = threading.Barrier(2)
    results: list[int] = []

    def attempt(client):
        from django.db import connection

        try:
            barrier.wait()
            results.append(
                client.post("/api/v1/auth/password/login/complete", {"code": code}, format="json").status_code
            )
        finally:
            connection.close()

    with time_machine.travel(now, tick=False):
        threads = [threading.Thread(target=attempt, args=(c,)) for c in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    assert sorted(results) == [200, 400]


def test_guessing_app_codes_hits_the_attempt_limit(registered):
    enable(registered)
    guesser = APIClient()
    guesser.post("/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json")

    answers = [
        guesser.post("/api/v1/auth/password/login/complete", {"code": f"{n:06d}"}, format="json") for n in range(11)
    ]

    # Turning the app on counted one attempt of this account's ten for the minute.
    assert {a.status_code for a in answers[:9]} == {400}
    assert answers[9].status_code == answers[10].status_code == 429
    assert int(answers[10]["Retry-After"]) >= 1

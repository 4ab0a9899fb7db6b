"""Local development without loopback webhooks: `manage.py listen` and docs/examples/listen.py
read a test key's events over the API (a real server: pytest-django's live server) and forward
them, in order, to a local receiver, signed with the forwarding secret they print."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient
from standardwebhooks.webhooks import Webhook as StandardWebhook

from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def test_key(make_key, settings) -> str:
    settings.PLATFORM_FEE_ADDRESSES = FEE_ADDRESSES
    settings.API_RATE_LIMITS = {"read": "100000/min", "write": "100000/min"}
    return make_key(livemode=False)


def a_test_draft_paid(key: str) -> str:
    """A test draft, seen then confirmed through the test helpers: draft.created, .seen, .confirmed."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    body = {"network": "Sepolia", "currency": "USDC", "receiverAddress": ADDRESSES["Sepolia"], "amountSats": 1_000}
    draft = client.post("/api/v1/drafts", body, format="json")
    assert draft.status_code == 201, draft.content
    pay = f"/api/v1/test-helpers/drafts/{draft.json()['id']}/pay"
    assert client.post(pay, {"confirmations": 0}, format="json").status_code == 200
    assert client.post(pay, {}, format="json").status_code == 200
    return draft.json()["id"]


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def printed_secret(output: str) -> str:
    found = re.search(r"forwarding secret is (whsec_\S+)", output)
    assert found, output
    return found.group(1)


def assert_forwarded_signed_in_order(receiver, secret: str, draft_id: str) -> None:
    bodies = [json.loads(r.body) for r in receiver.requests]
    assert [(b["event"], b["objectId"], b["sequence"]) for b in bodies] == [
        ("draft.created", draft_id, 1),
        ("draft.seen", draft_id, 2),
        ("draft.confirmed", draft_id, 3),
    ]
    for request in receiver.requests:
        expected = "sha256=" + hmac.new(secret.encode(), request.body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(request.headers["X-Service-Signature"], expected)
        assert StandardWebhook(secret).verify(request.body, request.headers)["data"]["draftId"] == draft_id
        assert request.headers["X-Service-Delivery"] == json.loads(request.body)["id"]
        assert json.loads(request.body)["data"]["livemode"] is False


def test_listen_forwards_a_test_drafts_events_signed_with_the_secret_it_prints(test_key, live_server, receiver):
    out = io.StringIO()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            call_command(
                "listen", forward_to=receiver.url, api_key=test_key, api_url=live_server.url, count=3, stdout=out
            )
        except BaseException as exc:  # reported by the test below
            failure.append(exc)

    listener = threading.Thread(target=run, daemon=True)
    listener.start()
    wait_for(lambda: "Ready" in out.getvalue() or failure, 30, "listen to start")
    assert not failure, failure

    draft_id = a_test_draft_paid(test_key)

    listener.join(60)
    assert not listener.is_alive() and not failure, (out.getvalue(), failure)
    assert_forwarded_signed_in_order(receiver, printed_secret(out.getvalue()), draft_id)
    assert out.getvalue().count("--> [200]") == 3


def test_listen_refuses_a_key_without_events_read(make_key, live_server, receiver):
    key = make_key("drafts:read")

    with pytest.raises(CommandError, match="403"):
        call_command("listen", forward_to=receiver.url, api_key=key, api_url=live_server.url, stdout=io.StringIO())


def test_the_example_script_forwards_with_only_an_api_key_and_the_service_url(test_key, live_server, receiver):
    env = {**os.environ, "PAYMENT_DRAFTS_API_KEY": test_key, "PAYMENT_DRAFTS_URL": live_server.url}
    script = subprocess.Popen(
        [sys.executable, str(ROOT / "docs" / "examples" / "listen.py"), "--forward-to", receiver.url, "--count", "3"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = [script.stdout.readline(), script.stdout.readline()]
        assert lines[0].startswith("Ready"), lines
        draft_id = a_test_draft_paid(test_key)
        output = "".join(lines) + script.communicate(timeout=60)[0]
    finally:
        if script.poll() is None:
            script.kill()
    assert script.returncode == 0, output
    assert_forwarded_signed_in_order(receiver, printed_secret(output), draft_id)

"""The receiver example in docs/webhooks.md, run as written against real deliveries."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.webhooks.conftest import deliver_due, record
from webhooks import endpoints, signing
from webhooks.models import Delivery, EventType

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "webhook_receiver.py"


class ExampleReceiver:
    def __init__(self, secret: str, port: int) -> None:
        self.lines: list[dict] = []
        self.process = subprocess.Popen(
            [sys.executable, str(EXAMPLE), str(port)],
            env={"WEBHOOK_SECRET": secret, "PATH": "/usr/bin:/bin"},
            stdout=subprocess.PIPE,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        self.wait_for(lambda: any("listening" in line for line in self.lines))
        self.port = port

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(json.loads(line))

    def wait_for(self, condition, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, self.lines
            time.sleep(0.02)

    def post(self, body: bytes, headers: dict[str, str]) -> int:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(5)


@pytest.fixture
def example(owner, loopback):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    webhook = endpoints.webhook_create(user=owner, url=f"http://127.0.0.1:{port}/webhooks", events=None)
    receiver = ExampleReceiver(webhook.secret, port)
    yield webhook, receiver
    receiver.stop()


def test_the_docs_include_the_example_file_verbatim():
    assert EXAMPLE.read_text() in (ROOT / "docs" / "webhooks.md").read_text()


def test_the_example_receiver_handles_real_deliveries_once_each(example, owner):
    webhook, receiver = example
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d-1", "status": "Seen"})
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d-1", "status": "Confirmed"})

    deliver_due()
    receiver.wait_for(lambda: len([line for line in receiver.lines if "handled" in line]) == 2)

    handled = {line["handled"]: line for line in receiver.lines if "handled" in line}
    assert set(handled) == {"draft.seen", "draft.confirmed"}
    assert handled["draft.confirmed"]["data"] == {"draftId": "d-1", "status": "Confirmed"}
    assert set(Delivery.objects.values_list("status", flat=True)) == {"Succeeded"}


def test_the_example_receiver_ignores_a_duplicate_delivery_id(example, owner):
    webhook, receiver = example
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d-2"})
    deliver_due()
    delivery = Delivery.objects.get()

    endpoints.delivery_redeliver(delivery=delivery)
    deliver_due()
    receiver.wait_for(lambda: any("duplicate" in line for line in receiver.lines))

    assert [line for line in receiver.lines if "handled" in line][0]["delivery"] == str(delivery.id)
    assert len([line for line in receiver.lines if "handled" in line]) == 1
    assert {"duplicate": str(delivery.id)} in receiver.lines
    delivery.refresh_from_db()
    assert delivery.status == "Succeeded" and delivery.attempts.count() == 2


def test_the_example_receiver_answers_401_to_a_missing_or_wrong_signature(example):
    webhook, receiver = example
    body = b'{"event":"draft.confirmed","data":{"draftId":"forged"}}'
    good = signing.service_signature(webhook.secret, body)

    missing = receiver.post(body, {"Content-Type": "application/json", "X-Service-Delivery": "x1"})
    wrong = receiver.post(body, {"X-Service-Signature": "sha256=" + "0" * 64, "X-Service-Delivery": "x2"})
    tampered = receiver.post(
        body.replace(b"forged", b"forgeD"), {"X-Service-Signature": good, "X-Service-Delivery": "x3"}
    )
    genuine = receiver.post(body, {"X-Service-Signature": good, "X-Service-Delivery": "x4"})

    assert (missing, wrong, tampered, genuine) == (401, 401, 401, 200)
    receiver.wait_for(lambda: any("handled" in line for line in receiver.lines))
    assert [line["delivery"] for line in receiver.lines if "handled" in line] == ["x4"]

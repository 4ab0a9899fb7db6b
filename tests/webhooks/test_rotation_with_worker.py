"""A secret rotation as a receiver lives it: a real Celery worker delivers to the example
receiver of docs/webhooks.md, which keeps accepting deliveries while it switches secrets."""

from __future__ import annotations

import socket

import pytest

from config.celery import app as celery_app
from tests.webhooks.test_killed_worker import _kill, _start_worker, _wait
from tests.webhooks.test_receiver_example import ExampleReceiver
from webhooks.models import DeliveryAttempt

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def handled(receiver: ExampleReceiver) -> list[str]:
    return [line["delivery"] for line in receiver.lines if "handled" in line]


def test_the_example_receiver_accepts_every_delivery_through_a_rotation_until_the_old_secret_retires(
    api_client, loopback, tmp_path
):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    created = api_client.post("/api/v1/webhooks", {"url": f"http://127.0.0.1:{port}/webhooks"}, format="json").json()
    receiver = ExampleReceiver(created["secret"], port)
    celery_app.control.purge()
    log = tmp_path / "worker.log"
    worker = _start_worker(log)
    try:
        # Rotated, but the receiver still runs with the old secret: accepted (previous signature)
        new_secret = api_client.post(f"/api/v1/webhooks/{created['id']}/rotate-secret").json()["secret"]
        first = api_client.post(f"/api/v1/webhooks/{created['id']}/test").json()
        _wait(lambda: first["id"] in handled(receiver), 60, f"delivery with the old secret\n{log.read_text()}")

        # The receiver switches to the new secret: accepted (current signature)
        receiver.stop()
        receiver = ExampleReceiver(new_secret, port)
        second = api_client.post(f"/api/v1/webhooks/{created['id']}/test").json()
        _wait(lambda: second["id"] in handled(receiver), 60, f"delivery with the new secret\n{log.read_text()}")

        # Rotated again with no overlap: the receiver's secret no longer signs, so it answers 401
        api_client.post(f"/api/v1/webhooks/{created['id']}/rotate-secret", {"overlapHours": 0}, format="json")
        third = api_client.post(f"/api/v1/webhooks/{created['id']}/test").json()
        _wait(
            lambda: DeliveryAttempt.objects.filter(delivery_id=third["id"], status_code__isnull=False).exists(),
            60,
            f"the attempt with a retired secret\n{log.read_text()}",
        )
        assert DeliveryAttempt.objects.get(delivery_id=third["id"]).status_code == 401
        assert third["id"] not in handled(receiver)
    finally:
        _kill(worker)
        receiver.stop()

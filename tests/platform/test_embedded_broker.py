"""The embedded default's broker (core/broker.py): files under VAR_DIR/broker that several
processes share. A file being written is never taken half-written, a damaged file is set aside
instead of stopping the consumer, and a busy worker looks again within a fraction of a second."""

from __future__ import annotations

import json
import threading
import time

import pytest
from kombu import Connection, Exchange, Queue

from core import broker


def _connection(root) -> Connection:
    for folder in ("queue", "control"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    return Connection(
        "filesystem://",
        transport="core.broker:Transport",
        transport_options={
            "data_folder_in": str(root / "queue"),
            "data_folder_out": str(root / "queue"),
            "control_folder": str(root / "control"),
        },
    )


def _queue(tmp_path) -> Queue:
    """A queue named after the test: kombu keeps the bindings it made in a process-wide state."""
    name = tmp_path.name.replace("_", "-")[:40]
    return Queue(name, Exchange(name), routing_key=name)


def _receive_all(connection: Connection, queue: Queue, count: int, timeout: float = 5) -> list:
    received: list = []
    with connection.Consumer(queue, callbacks=[lambda body, message: (received.append(body), message.ack())]):
        deadline = time.monotonic() + timeout
        while len(received) < count and time.monotonic() < deadline:
            try:
                connection.drain_events(timeout=0.2)
            except TimeoutError:
                pass
    return received


def test_an_empty_or_half_written_message_file_is_set_aside_and_the_next_one_delivered(tmp_path):
    queue = _queue(tmp_path)
    with _connection(tmp_path) as connection:
        queue(connection.default_channel).declare()
        # What another process's write in progress looked like: a file created, not yet written.
        (tmp_path / "queue" / f"0000001_a.{queue.name}.msg").write_bytes(b"")
        (tmp_path / "queue" / f"0000002_b.{queue.name}.msg").write_bytes(b'{"body": "eyJ')
        connection.Producer().publish({"n": 1}, exchange=queue.exchange, routing_key=queue.name, declare=[queue])
        assert _receive_all(connection, queue, 1) == [{"n": 1}]
    assert sorted(p.name for p in (tmp_path / "damaged").iterdir()) == [
        f"0000001_a.{queue.name}.msg",
        f"0000002_b.{queue.name}.msg",
    ]
    assert not list((tmp_path / "queue").iterdir())


def test_a_message_file_appears_whole_or_not_at_all(tmp_path, monkeypatch):
    """The writer writes a hidden temporary file and renames it: a reader listing the folder
    while the write is under way sees no message file."""
    seen: list[tuple[int, list[str]]] = []
    real_replace = broker.os.replace

    def watching_replace(source, target):
        visible = [p.name for p in (tmp_path / "queue").iterdir() if not p.name.startswith(".")]
        seen.append((len((tmp_path / "queue" / source.rsplit("/", 1)[-1]).read_bytes()), visible))
        real_replace(source, target)

    queue = _queue(tmp_path)
    with _connection(tmp_path) as connection:
        queue(connection.default_channel).declare()
        monkeypatch.setattr(broker.os, "replace", watching_replace)
        connection.Producer().publish({"n": 1}, exchange=queue.exchange, routing_key=queue.name, declare=[queue])
        monkeypatch.undo()
        # Just before the rename: the temporary file holds the whole message, no message file shows.
        assert len(seen) == 1 and seen[0][0] > 100 and seen[0][1] == [], seen
        assert _receive_all(connection, queue, 1) == [{"n": 1}]


def test_a_damaged_exchange_table_does_not_stop_a_consumer(tmp_path):
    queue = _queue(tmp_path)
    (tmp_path / "control").mkdir(parents=True)
    (tmp_path / "control" / f"{queue.name}.exchange").write_bytes(b"")  # a rewrite in progress, as kombu did it
    with _connection(tmp_path) as connection:
        queue(connection.default_channel).declare()
        connection.Producer().publish({"n": 2}, exchange=queue.exchange, routing_key=queue.name, declare=[queue])
        assert _receive_all(connection, queue, 1) == [{"n": 2}]
    table = json.loads((tmp_path / "control" / f"{queue.name}.exchange").read_text())
    assert table == [[queue.name, "", queue.name]]


def test_messages_sent_from_many_threads_all_arrive_once(tmp_path):
    queue = _queue(tmp_path)
    with _connection(tmp_path) as connection:
        queue(connection.default_channel).declare()

    def send(start: int) -> None:
        with _connection(tmp_path) as own:
            producer = own.Producer()
            for n in range(start, start + 50):
                producer.publish({"n": n}, exchange=queue.exchange, routing_key=queue.name, declare=[queue])

    threads = [threading.Thread(target=send, args=(i * 50,)) for i in range(4)]
    with _connection(tmp_path) as connection:
        for thread in threads:
            thread.start()
        received = _receive_all(connection, queue, 200, timeout=20)
        for thread in threads:
            thread.join()
    assert sorted(body["n"] for body in received) == list(range(200))


def test_a_busy_consumer_looks_again_within_a_tenth_of_a_second():
    """kombu sleeps `polling_interval` whenever a worker's prefetch window is full: at kombu's
    1 s a worker of 2 processes ran about 2 tasks a second."""
    assert broker.Transport.polling_interval <= 0.1
    pytest.importorskip("django")
    from django.conf import settings

    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("polling_interval", 0.05) <= 0.1

"""Leases are short and renewed while their holders work (core/leases.py), so a process killed
with SIGKILL frees its work within one lease: the beat's, a periodic task's, the chain
listener's; and a process starting on the same host clears its dead predecessor's at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from chainwatch import listener
from core.beat import BEAT_LEASE, LeasedScheduler
from core.leases import holder_name, keeper, lease_holder, lease_release, lease_take, leases_clear_dead
from core.models import Lease
from payments.enums import Network

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


def _wait(condition, timeout: float, what: str) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"timed out waiting for {what}"
        time.sleep(0.05)
    return time.monotonic() - started


def test_leases_are_ten_seconds_unless_set():
    assert settings.LEASE_SECONDS == 10
    assert settings.BEAT_LEASE_SECONDS == 10


@pytest.mark.slow
def test_a_lease_kept_by_its_holder_outlives_its_length_and_frees_once_dropped(settings):
    settings.LEASE_SECONDS = 3
    holder = holder_name()
    assert lease_take("work", holder, 3)
    keeper.hold("work", holder, 3)
    try:
        time.sleep(4.5)  # one and a half leases: renewed meanwhile
        assert lease_holder("work") == holder
        assert not lease_take("work", "someone-else", 3)
    finally:
        keeper.drop("work")
        lease_release("work", holder)
    time.sleep(1.5)  # the keeper renews nothing it dropped
    assert lease_holder("work") is None


@pytest.mark.slow
def test_a_process_killed_while_holding_a_kept_lease_frees_it_within_the_lease(settings):
    # A real process takes and keeps a periodic task's lease (as a worker's run does), then is killed.
    work = "scheduled:webhooks.dispatch_due:[[], {}]"
    db = connection.settings_dict
    code = (
        "import django, time; django.setup()\n"
        "from core.leases import holder_name, keeper, lease_take\n"
        f"h = holder_name(); assert lease_take({work!r}, h, 3); keeper.hold({work!r}, h, 3)\n"
        "print('held', flush=True); time.sleep(120)\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "LEASE_SECONDS": "3",
    }
    process = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE)
    try:
        assert process.stdout.readline().strip() == b"held"
        time.sleep(5)  # longer than the lease: still held, renewed by the keeper thread
        assert lease_holder(work).split(":")[1] == str(process.pid)
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        killed = time.monotonic()
        # Another host's process takes it up once the lease runs out (no renewal any more)
        _wait(lambda: lease_take(work, "elsewhere:1:x", 3), 10, "the lease to expire")
        assert time.monotonic() - killed <= 3.5
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def test_a_process_starting_on_the_host_of_a_dead_holder_clears_its_leases_at_once():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()[:40]
    alive = f"{host}:{os.getppid()}:aaaa"  # a process that still runs
    gone = f"{host}:{dead.pid}:bbbb"
    reused = f"{host}:{os.getpid()}:cccc"  # this pid, but not a holder this process made
    far = f"elsewhere:{dead.pid}:dddd"  # another machine's: only its expiry frees it
    for name, holder in [("a", alive), ("b", gone), ("c", reused), ("d", far)]:
        assert lease_take(name, holder, 600)
    mine = holder_name()
    assert lease_take("e", mine, 600)

    assert sorted(leases_clear_dead(mine=frozenset({mine}))) == ["b", "c"]
    assert sorted(Lease.objects.values_list("name", flat=True)) == ["a", "d", "e"]


def test_a_restored_database_does_not_keep_the_beat_waiting_for_its_old_lease(tmp_path, settings):
    # A backup taken while a beat of this host ran, restored after that beat is gone
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert lease_take(BEAT_LEASE, f"{socket.gethostname()[:40]}:{dead.pid}:0000", 600)
    from config.celery import _clear_leases_of_dead_processes

    _clear_leases_of_dead_processes()  # beat_init / worker_ready
    from config.celery import app

    beat = LeasedScheduler(app=app, schedule_filename=str(tmp_path / "schedule"))
    assert beat.lease_renew()
    beat.close()
    assert lease_holder(BEAT_LEASE) is None


@pytest.mark.slow
def test_a_standby_beat_takes_over_once_the_lease_of_a_dead_one_runs_out(tmp_path, settings):
    settings.BEAT_LEASE_SECONDS = 3
    from config.celery import app

    assert lease_take(BEAT_LEASE, "elsewhere:1:dead", 3)  # a beat on another machine, then killed
    beat = LeasedScheduler(app=app, schedule_filename=str(tmp_path / "schedule"))
    try:
        assert not beat.lease_renew()
        assert beat.lease_check_seconds == 1.0
        took = _wait(beat.lease_renew, 10, "the standby to take the lease")
        assert took <= 3.5
        assert lease_holder(BEAT_LEASE) == beat.lease_holder
    finally:
        beat.close()


class Passes:
    def __init__(self) -> None:
        self.starts: list[float] = []

    def __call__(self, network: str, family: str) -> int:
        self.starts.append(time.monotonic())
        return 0


@pytest.mark.slow
def test_two_listeners_run_a_watcher_once_and_the_standby_takes_over_within_a_lease(settings):
    settings.LEASE_SECONDS = 3
    settings.CHAINWATCH_POLL_MIN_SECONDS = 0.2
    settings.CHAINWATCH_INTERVAL_SECONDS = 0.2
    settings.CHAINWATCH_MIN_PASS_SPACING_MS = 0
    first_passes, second_passes = Passes(), Passes()
    first = listener.Watch(Network.MAINNET, "bitcoin", subscription=None, run=first_passes)
    second = listener.Watch(Network.MAINNET, "bitcoin", subscription=None, run=second_passes)
    taken, holders = [], []

    async def scenario() -> None:
        one = asyncio.create_task(first.main())
        while not first_passes.starts:
            await asyncio.sleep(0.05)
        two = asyncio.create_task(second.main())
        await asyncio.sleep(2)
        assert len(first_passes.starts) >= 5 and not second_passes.starts  # one listener polls the node
        # The first listener's process dies (SIGKILL): nothing more from it, its lease not given up
        first.leading.clear()
        one.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await one
        died = time.monotonic()
        while not second_passes.starts:
            await asyncio.sleep(0.05)
        taken.append(second_passes.starts[0] - died)
        holders.append(
            await asyncio.get_running_loop().run_in_executor(second.lease_executor, lease_holder, second.lease_name)
        )
        two.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await two

    asyncio.run(scenario())
    assert taken[0] <= 3 + 1.5, taken  # the lease, then the standby's next check
    assert holders == [second.holder]
    assert lease_holder(first.lease_name) is None  # the second stopped cleanly: given up


@pytest.mark.slow
def test_a_listener_that_loses_its_lease_alive_closes_its_subscription_and_reopens_it_when_it_leads_again(settings):
    # A listener whose lease another one took (its own renewals failed for longer than the lease:
    # the database away, the process paused) keeps no connection to the node while it stands by.
    settings.LEASE_SECONDS = 3
    settings.CHAINWATCH_MIN_PASS_SPACING_MS = 0
    opened: list[float] = []
    closed: list[float] = []

    async def subscription(wake, live) -> None:
        opened.append(time.monotonic())
        live(True)
        try:
            await asyncio.Event().wait()  # a node that sends nothing: open until closed
        finally:
            closed.append(time.monotonic())

    watch = listener.Watch(Network.ETHEREUM, "evm", subscription=subscription, run=Passes())
    states: list[tuple[int, int, bool]] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.create_task(watch.main())
        while not opened:
            await asyncio.sleep(0.05)
        # Another listener holds the lease now
        await loop.run_in_executor(watch.lease_executor, _steal, watch.lease_name)
        stolen = time.monotonic()
        while not closed:
            assert time.monotonic() - stolen < 3, "the subscription stayed open"
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.5)  # more checks of the lease: still standing by, still closed
        states.append((len(opened), len(closed), watch.live))
        # The other one gives the lease up: this one leads and subscribes again
        await loop.run_in_executor(watch.lease_executor, lease_release, watch.lease_name, "elsewhere:1:other")
        while len(opened) < 2:
            await asyncio.sleep(0.05)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert states == [(1, 1, False)]
    assert len(opened) == 2 and len(closed) == 2  # the stop closes it too


def _steal(name: str) -> None:
    Lease.objects.filter(name=name).update(holder="elsewhere:1:other", expires_ms=int(time.time() * 1000) + 60_000)

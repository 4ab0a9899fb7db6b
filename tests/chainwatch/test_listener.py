"""The chain listener against a real anvil node: a new block wakes a pass at once
(eth_subscribe newHeads over anvil's WebSocket), and polling takes over without one."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time

import pytest

from chainwatch import listener
from chainwatch.models import Cursor
from drafts.enums import DraftStatus
from payments.enums import Currency, Network
from tests.chainwatch.conftest import free_port
from tests.factories import make_draft

pytestmark = pytest.mark.django_db(transaction=True)


def seen_after(draft, since: float, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        draft.refresh_from_db()
        if draft.status != DraftStatus.PENDING:
            return time.monotonic() - since
        time.sleep(0.02)
    raise AssertionError(f"the draft stayed {draft.status}")


def test_a_token_payment_is_seen_within_a_second_of_its_block_without_waiting_for_a_poll(
    owner, ethereum, running, settings
):
    settings.CHAINWATCH_INTERVAL_SECONDS = 120  # neither the safety-net pass nor polling can explain it
    settings.CHAINWATCH_POLL_MIN_SECONDS = 120
    run = running()
    [watch] = run.watches
    assert (watch.network, watch.family) == (Network.ETHEREUM, "evm") and watch.subscription is not None
    run.wait_for(lambda: watch.live and watch.passes_run >= 1, timeout=10)
    draft = make_draft(
        owner, currency=Currency.USDC, receiver_address=ethereum.new_address(), amount_base_units=25_000_000
    )

    tx = ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)
    mined = time.monotonic()  # anvil mines each transaction into a block as it arrives

    assert seen_after(draft, mined, timeout=5) < 1.5
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == tx
    assert Cursor.objects.get(network=Network.ETHEREUM, family="evm").last_error == ""


def test_each_new_block_moves_the_confirmations_at_once(owner, ethereum, running, settings):
    settings.CHAINWATCH_INTERVAL_SECONDS = 120
    settings.CHAINWATCH_POLL_MIN_SECONDS = 120
    run = running()
    [watch] = run.watches
    run.wait_for(lambda: watch.live and watch.passes_run >= 1, timeout=10)
    draft = make_draft(
        owner,
        currency=Currency.USDC,
        receiver_address=ethereum.new_address(),
        amount_base_units=25_000_000,
        required_confirmations=3,
    )
    ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)
    seen_after(draft, time.monotonic(), timeout=5)

    ethereum.mine(2)  # the block that reaches 3 confirmations
    reached = time.monotonic()

    run.wait_for(lambda: draft.refresh_from_db() or draft.status == DraftStatus.CONFIRMED, timeout=5)
    assert time.monotonic() - reached < 1.5


def test_without_a_websocket_the_listener_polls_at_the_short_interval(owner, ethereum, running, settings):
    closed = f"ws://127.0.0.1:{free_port()}"  # nothing listens there
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": ethereum.url, "ws_url": closed}}
    settings.CHAINWATCH_INTERVAL_SECONDS = 120
    settings.CHAINWATCH_POLL_MIN_SECONDS = 1
    run = running()
    [watch] = run.watches
    run.wait_for(lambda: watch.passes_run >= 1, timeout=10)
    draft = make_draft(
        owner, currency=Currency.USDC, receiver_address=ethereum.new_address(), amount_base_units=25_000_000
    )

    ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)

    # Not subscribed: found by a poll, within the (backed-off, then reset) short interval, never 120 s.
    assert seen_after(draft, time.monotonic(), timeout=10) < 8
    assert not watch.live


def test_the_websocket_address_comes_from_the_rpc_address_unless_set():
    from chainwatch.networks import websocket_url_of

    assert websocket_url_of("http://127.0.0.1:8545") == "ws://127.0.0.1:8545"
    assert websocket_url_of("https://node.example/v1/key") == "wss://node.example/v1/key"
    assert websocket_url_of("") == ""


def test_polling_backs_off_while_nothing_turns_up_and_starts_short_again_when_something_does(settings):
    settings.CHAINWATCH_POLL_MIN_SECONDS = 2
    settings.CHAINWATCH_INTERVAL_SECONDS = 15
    watch = listener.Watch(Network.MAINNET, "bitcoin", subscription=None)

    waits = [watch._next_poll(found=0) for _ in range(4)]
    assert waits == [4, 8, 15, 15]
    assert watch._next_poll(found=1) == 2  # a transfer came in: look again soon

    watch.live = True  # subscribed: polling is only the safety net
    assert watch._next_poll(found=0) == 15


class PassRecorder:
    """A watcher pass that notes when it starts and can be held until released."""

    def __init__(self, hold_first: bool = False) -> None:
        self.starts: list[float] = []
        self.release = threading.Event()
        if not hold_first:
            self.release.set()

    def __call__(self, network: str, family: str) -> int:
        self.starts.append(time.monotonic())
        self.release.wait(10)
        return 0


def run_watch(watch: listener.Watch, scenario) -> None:
    """The watch's loop beside `scenario(watch)`; stopped when the scenario returns."""

    async def main() -> None:
        task = asyncio.create_task(watch.main())
        try:
            await scenario(watch)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    asyncio.run(main())


def test_notifications_during_a_pass_give_one_more_pass_not_one_each(settings):
    settings.CHAINWATCH_POLL_MIN_SECONDS = 60  # no timed poll in this test
    settings.CHAINWATCH_INTERVAL_SECONDS = 120
    settings.CHAINWATCH_MIN_PASS_SPACING_MS = 0
    passes = PassRecorder(hold_first=True)
    watch = listener.Watch(Network.MAINNET, "bitcoin", subscription=None, run=passes)

    async def scenario(watch) -> None:
        while not passes.starts:  # the first pass runs, held
            await asyncio.sleep(0.01)
        for _ in range(50):
            watch.wake()
            await asyncio.sleep(0.002)
        passes.release.set()
        await asyncio.sleep(0.5)

    run_watch(watch, scenario)
    assert len(passes.starts) == 2 and watch.passes_run == 2


def test_passes_start_at_least_the_spacing_apart_while_notifications_come_faster(settings):
    settings.CHAINWATCH_POLL_MIN_SECONDS = 60
    settings.CHAINWATCH_INTERVAL_SECONDS = 120
    settings.CHAINWATCH_MIN_PASS_SPACING_MS = 300
    passes = PassRecorder()
    watch = listener.Watch(Network.MAINNET, "bitcoin", subscription=None, run=passes)
    last_wake = []

    async def scenario(watch) -> None:
        started = time.monotonic()
        while time.monotonic() - started < 1.5:  # a block every 20 ms
            watch.wake()
            last_wake[:] = [time.monotonic()]
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.6)

    run_watch(watch, scenario)
    gaps = [b - a for a, b in itertools.pairwise(passes.starts)]
    assert min(gaps) >= 0.29, gaps
    assert 5 <= len(passes.starts) <= 7, passes.starts  # 1.5 s at one pass per 0.3 s: not 75
    assert passes.starts[-1] >= last_wake[0]  # the last notification still got its pass

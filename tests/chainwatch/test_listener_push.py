"""The listener's push sources other than EVM, against local servers speaking the documented
protocols: Bitcoin Core's ZMQ publisher (topic | body | 4-byte little-endian sequence) and a
Solana RPC node's WebSocket (`logsSubscribe`, `logsNotification`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
import threading
import time

import pytest
import zmq
from websockets.asyncio.server import serve

from chainwatch import listener
from drafts.enums import DraftStatus
from payments.enums import Currency, FeePlacement, Method, Network
from tests.chainwatch.conftest import free_port
from tests.chainwatch.fakes import FakeBitcoin
from tests.factories import make_draft

pytestmark = pytest.mark.django_db(transaction=True)

BTC_RECEIVER = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
FEE_ADDRESS = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
SOL_RECEIVER = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"


def changed_within(draft, status: str, seconds: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        draft.refresh_from_db()
        if draft.status == status:
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"still {draft.status}, not {status}")


class ZmqPublisher:
    """Bitcoin Core's -zmqpubhashblock / -zmqpubrawtx publisher, as doc/zmq.md describes it."""

    def __init__(self) -> None:
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.PUB)
        port = free_port()
        self.url = f"tcp://127.0.0.1:{port}"
        self.socket.bind(self.url)
        self.sequence = {b"hashblock": 0, b"rawtx": 0}

    def publish(self, topic: bytes, body: bytes) -> None:
        self.socket.send_multipart([topic, body, struct.pack("<I", self.sequence[topic])])
        self.sequence[topic] += 1

    def close(self) -> None:
        self.socket.close(linger=0)
        self.context.term()


@pytest.fixture
def core_with_zmq(fake_server, settings):
    chain = FakeBitcoin()
    chain.mine(5)
    server = fake_server(chain.core_handler)
    publisher = ZmqPublisher()
    settings.CHAINWATCH_ENDPOINTS = {
        "Mainnet": {"bitcoin_rpc_url": server.url.replace("//", "//user:pass@"), "zmq_url": publisher.url}
    }
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 2
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    chain.publisher = publisher
    yield chain
    publisher.close()


def test_bitcoin_core_zmq_rawtx_shows_a_payment_and_hashblock_confirms_it_at_once(
    owner, core_with_zmq, running, settings
):
    settings.ENABLED_NETWORKS = [Network.MAINNET]
    settings.CHAINWATCH_INTERVAL_SECONDS = 120  # polling cannot explain what follows
    settings.CHAINWATCH_POLL_MIN_SECONDS = 120
    run = running()
    [watch] = run.watches
    assert (watch.network, watch.family) == (Network.MAINNET, "bitcoin") and watch.subscription is not None
    run.wait_for(lambda: watch.live and watch.passes_run >= 1, timeout=10)
    draft = make_draft(
        owner,
        network=Network.MAINNET,
        currency=Currency.BTC,
        method=Method.MULTI_OUTPUT,
        receiver_address=BTC_RECEIVER,
        amount_base_units=250_000,
        fee_placement=FeePlacement.OUTPUT,
        platform_fee_address=FEE_ADDRESS,
        fee_base_units=1_000,
        required_confirmations=1,
    )

    core_with_zmq.pay((BTC_RECEIVER, 250_000), (FEE_ADDRESS, 1_000))
    core_with_zmq.publisher.publish(b"rawtx", bytes(100))  # the node announces the transaction
    assert changed_within(draft, DraftStatus.SEEN, 5) < 1.5

    core_with_zmq.mine(1)
    core_with_zmq.publisher.publish(b"hashblock", bytes.fromhex(core_with_zmq.blocks[-1][0]))
    assert changed_within(draft, DraftStatus.CONFIRMED, 5) < 1.5


def test_a_burst_of_rawtx_inside_the_throttle_window_gives_one_delayed_wake(settings):
    settings.CHAINWATCH_POLL_MIN_SECONDS = 1  # the rawtx throttle
    publisher = ZmqPublisher()
    wakes: list[float] = []
    connected = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.create_task(
            listener.bitcoin_zmq([publisher.url], lambda: wakes.append(loop.time()), connected.append)
        )
        try:
            await until(lambda: connected and connected[-1])
            while len(wakes) < 2:  # past the connection's catch-up wake: our subscription has reached the node
                publisher.publish(b"hashblock", bytes(32))
                await asyncio.sleep(0.05)
            await asyncio.sleep(1.2)  # every probe in, no rawtx wake for longer than the window
            wakes.clear()

            publisher.publish(b"rawtx", bytes(100))
            await until(lambda: wakes)  # the first transaction wakes a pass at once
            first = wakes[0]
            for _ in range(50):  # then a busy mempool: fifty more inside the window
                publisher.publish(b"rawtx", bytes(100))
            await asyncio.sleep(0.5)
            assert len(wakes) == 1  # none of them woke a pass yet
            await asyncio.sleep(1.5)
            assert len(wakes) == 2  # one pass for all fifty, when the window ends: not fifty, not none
            assert 0.99 <= wakes[1] - first < 1.3
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    try:
        asyncio.run(scenario())
    finally:
        publisher.close()


async def until(condition, timeout: float = 5) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def test_a_payment_announced_inside_the_rawtx_throttle_window_is_seen_when_it_ends(
    owner, core_with_zmq, running, settings
):
    settings.ENABLED_NETWORKS = [Network.MAINNET]
    settings.CHAINWATCH_INTERVAL_SECONDS = 120  # subscribed: the safety-net poll is 2 minutes away
    settings.CHAINWATCH_POLL_MIN_SECONDS = 1  # the rawtx throttle
    run = running()
    [watch] = run.watches
    run.wait_for(lambda: watch.live and watch.passes_run >= 1, timeout=10)
    time.sleep(2.2)  # a pass that ended before the subscription was live set a poll 2 s later: let it pass
    draft = make_draft(
        owner,
        network=Network.MAINNET,
        currency=Currency.BTC,
        receiver_address=BTC_RECEIVER,
        amount_base_units=250_000,
        required_confirmations=1,
    )
    passes = watch.passes_run

    core_with_zmq.pay(("bc1qsomeoneelse0000000000000000000000000000", 5_000))
    core_with_zmq.publisher.publish(b"rawtx", bytes(100))  # someone else's transaction: a pass at once
    announced = time.monotonic()
    run.wait_for(lambda: watch.passes_run == passes + 1, timeout=5)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING

    core_with_zmq.pay((BTC_RECEIVER, 250_000))  # the payment, announced inside the window
    for _ in range(20):
        core_with_zmq.publisher.publish(b"rawtx", bytes(100))

    changed_within(draft, DraftStatus.SEEN, 5)
    assert 0.9 <= time.monotonic() - announced < 2.5  # when the window ended, not at the 120 s poll
    time.sleep(1.5)
    assert watch.passes_run == passes + 2  # one pass for the twenty announcements


class SolanaWebSocket:
    """A Solana RPC node's WebSocket as its docs show: logsSubscribe answers a subscription id,
    and each matching transaction is a logsNotification for that subscription."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}"
        self.subscriptions: dict[int, tuple[str, str]] = {}  # id -> (address, commitment)
        self.clients = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def handler(ws) -> None:
            self.clients.append(ws)
            async for raw in ws:
                request = json.loads(raw)
                if request["method"] == "logsSubscribe":
                    number = len(self.subscriptions) + 24040
                    address = request["params"][0]["mentions"][0]
                    commitment = (request["params"][1] if len(request["params"]) > 1 else {}).get("commitment")
                    self.subscriptions[number] = (address, commitment or "finalized")
                    await ws.send(json.dumps({"jsonrpc": "2.0", "result": number, "id": request["id"]}))
                elif request["method"] == "logsUnsubscribe":
                    self.subscriptions.pop(request["params"][0], None)
                    await ws.send(json.dumps({"jsonrpc": "2.0", "result": True, "id": request["id"]}))

        async def main() -> None:
            self.stopped = asyncio.Event()
            async with serve(handler, "127.0.0.1", self.port):
                self.ready.set()
                await self.stopped.wait()

        self.loop.run_until_complete(main())

    def notify(self, address: str, commitment: str, signature: str) -> None:
        async def send() -> None:
            for number, (subscribed, level) in list(self.subscriptions.items()):
                if subscribed != address or level != commitment:
                    continue
                note = {
                    "jsonrpc": "2.0",
                    "method": "logsNotification",
                    "params": {
                        "result": {
                            "context": {"slot": 5208469},
                            "value": {
                                "signature": signature,
                                "err": None,
                                "logs": ["Program 11111111111111111111111111111111 success"],
                            },
                        },
                        "subscription": number,
                    },
                }
                for client in self.clients:
                    await client.send(json.dumps(note))

        asyncio.run_coroutine_threadsafe(send(), self.loop).result(5)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stopped.set)
        self.thread.join(10)


def test_solana_logs_notifications_show_a_payment_when_confirmed_and_confirm_it_when_finalized(
    owner, solana, running, settings
):
    node = SolanaWebSocket()
    try:
        settings.CHAINWATCH_ENDPOINTS = {"Solana": {"rpc_url": solana.server.url, "ws_url": node.url}}
        settings.ENABLED_NETWORKS = [Network.SOLANA]
        settings.CHAINWATCH_INTERVAL_SECONDS = 120
        settings.CHAINWATCH_POLL_MIN_SECONDS = 1  # how often the subscribed addresses are read again
        draft = make_draft(
            owner,
            network=Network.SOLANA,
            currency=Currency.SOL,
            receiver_address=SOL_RECEIVER,
            amount_base_units=1_500_000_000,
            solana_reference=f"Ref{1:040d}",
            required_confirmations=1,
        )
        run = running()
        [watch] = run.watches
        run.wait_for(lambda: watch.live and watch.passes_run >= 1, timeout=10)
        run.wait_for(lambda: len(node.subscriptions) == 2, timeout=5)  # confirmed and finalized
        assert {address for address, _ in node.subscriptions.values()} == {SOL_RECEIVER}
        # Polling now would wait for the 120 s interval: the notifications must do it.
        settings.CHAINWATCH_POLL_MIN_SECONDS = 120
        time.sleep(1.2)  # the listener's current refresh wait (1 s) ends; the next is 120 s away

        signature = solana.pay_sol(reference=draft.solana_reference, receiver=SOL_RECEIVER, lamports=1_500_000_000)
        node.notify(SOL_RECEIVER, "confirmed", signature)
        assert changed_within(draft, DraftStatus.SEEN, 5) < 1.5

        solana.finalize(signature)
        node.notify(SOL_RECEIVER, "finalized", signature)
        assert changed_within(draft, DraftStatus.CONFIRMED, 5) < 1.5
    finally:
        node.close()

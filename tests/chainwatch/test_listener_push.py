"""The listener's push sources other than EVM, against local servers speaking the documented
protocols: Bitcoin Core's ZMQ publisher (topic | body | 4-byte little-endian sequence) and a
Solana RPC node's WebSocket (`accountSubscribe`/`accountNotification`/`accountUnsubscribe`,
`logsSubscribe`/`logsNotification`/`logsUnsubscribe`)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import struct
import threading
import time

import pytest
import zmq
from solders.pubkey import Pubkey
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

from chainwatch import listener
from chainwatch.solana import TOKEN_PROGRAM, associated_token_address
from drafts.enums import DraftStatus
from payments.enums import Currency, FeePlacement, Method, Network
from tests.chainwatch.conftest import free_port
from tests.chainwatch.fakes import FakeBitcoin
from tests.factories import make_draft

pytestmark = pytest.mark.django_db(transaction=True)

BTC_RECEIVER = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
FEE_ADDRESS = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
SOL_RECEIVER = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
OTHER_SOL_RECEIVER = "HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH"
USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SYSTEM_PROGRAM = "11111111111111111111111111111111"


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


@pytest.mark.slow
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


@pytest.mark.slow
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
    """A Solana RPC node's WebSocket as its docs show (solana.com/docs/rpc/websocket):
    accountSubscribe and logsSubscribe answer a subscription id, a change of the account (or a
    transaction mentioning the address) is an accountNotification (logsNotification) for that
    subscription, and the unsubscribe methods answer true. A node without accountSubscribe
    answers it "Method not found"."""

    def __init__(self, *, account_subscribe: bool = True) -> None:
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}"
        self.account_subscribe = account_subscribe
        # id -> (method, address, commitment, encoding)
        self.subscriptions: dict[int, tuple[str, str, str, str | None]] = {}
        self.unsubscribed: list[tuple[str, int]] = []
        self.refused: list[str] = []
        self.numbers = iter(range(23784, 10**6))
        self.clients = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    def _answer(self, request: dict) -> dict:
        method, params = request["method"], request["params"]
        config = params[1] if len(params) > 1 else {}
        if method == "accountSubscribe" and self.account_subscribe:
            encoding = config.get("encoding", "base58")
            assert encoding == "base64", f"this node speaks base64 accounts only, not {encoding}"
            number = next(self.numbers)
            self.subscriptions[number] = (method, params[0], config.get("commitment", "finalized"), encoding)
            return {"result": number}
        if method == "logsSubscribe":
            if len(params[0]["mentions"]) != 1:
                return {"error": {"code": -32602, "message": "Invalid Request: Only 1 address supported"}}
            number = next(self.numbers)
            self.subscriptions[number] = (method, params[0]["mentions"][0], config.get("commitment", "finalized"), None)
            return {"result": number}
        if method in ("accountUnsubscribe", "logsUnsubscribe") and (
            method != "accountUnsubscribe" or self.account_subscribe
        ):
            subscribed = self.subscriptions.get(params[0])
            if subscribed is None or subscribed[0] != method.replace("Unsubscribe", "Subscribe"):
                return {"error": {"code": -32602, "message": "Invalid subscription id."}}
            del self.subscriptions[params[0]]
            self.unsubscribed.append((method, params[0]))
            return {"result": True}
        self.refused.append(method)
        return {"error": {"code": -32601, "message": "Method not found"}}

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def handler(ws) -> None:
            self.clients.append(ws)
            try:
                async for raw in ws:
                    request = json.loads(raw)
                    await ws.send(json.dumps({"jsonrpc": "2.0", **self._answer(request), "id": request["id"]}))
            except ConnectionClosed:
                pass  # the listener went away: as a node, forget it

        async def main() -> None:
            self.stopped = asyncio.Event()
            async with serve(handler, "127.0.0.1", self.port):
                self.ready.set()
                await self.stopped.wait()

        self.loop.run_until_complete(main())

    def subscribed(self, method: str) -> set[tuple[str, str]]:
        """(address, commitment) of each subscription by `method`."""
        return {(address, level) for m, address, level, _ in self.subscriptions.values() if m == method}

    def _send(self, method: str, address: str, commitment: str, value: dict, notification: str) -> None:
        async def send() -> None:
            for number, (subscribed_by, subscribed, level, _) in list(self.subscriptions.items()):
                if subscribed_by != method or subscribed != address or level != commitment:
                    continue
                note = {
                    "jsonrpc": "2.0",
                    "method": notification,
                    "params": {"result": {"context": {"slot": 5208469}, "value": value}, "subscription": number},
                }
                for client in self.clients:
                    await client.send(json.dumps(note))

        asyncio.run_coroutine_threadsafe(send(), self.loop).result(5)

    def notify(self, address: str, commitment: str, signature: str) -> None:
        """A transaction mentioning `address` reached `commitment`."""
        value = {"signature": signature, "err": None, "logs": [f"Program {SYSTEM_PROGRAM} success"]}
        self._send("logsSubscribe", address, commitment, value, "logsNotification")

    def account_changed(self, address: str, commitment: str, account: dict) -> None:
        """The account at `address` changed in a slot that reached `commitment`."""
        self._send("accountSubscribe", address, commitment, account, "accountNotification")

    def close(self) -> None:
        """The node goes away: it drops its connections (a listener the test stopped sent its
        close frame but its loop ended before it closed the TCP connection, and a graceful close
        would wait ten seconds for that) and stops serving."""

        def stop() -> None:
            for client in self.clients:
                client.transport.abort()
            self.stopped.set()

        self.loop.call_soon_threadsafe(stop)
        self.thread.join(10)
        assert not self.thread.is_alive(), "the node did not stop"


def wallet_account(lamports: int) -> dict:
    """A wallet as getAccountInfo shows it in base64: the system program's, without data."""
    return {
        "lamports": lamports,
        "data": ["", "base64"],
        "owner": SYSTEM_PROGRAM,
        "executable": False,
        "rentEpoch": 18446744073709551615,
        "space": 0,
    }


def token_account(*, mint: str, owner: str, amount: int) -> dict:
    """An SPL token account in base64: the Token program's 165-byte layout (mint, owner,
    amount, delegate, state, is_native, delegated_amount, close_authority)."""
    data = (
        bytes(Pubkey.from_string(mint))
        + bytes(Pubkey.from_string(owner))
        + amount.to_bytes(8, "little")
        + bytes(36)  # no delegate
        + bytes([1])  # initialized
        + bytes(12)  # not native
        + bytes(8)  # nothing delegated
        + bytes(36)  # no close authority
    )
    assert len(data) == 165
    return {
        "lamports": 2039280,
        "data": [base64.b64encode(data).decode(), "base64"],
        "owner": TOKEN_PROGRAM,
        "executable": False,
        "rentEpoch": 18446744073709551615,
        "space": 165,
    }


@pytest.fixture
def solana_node(solana, settings):
    """The fake cluster's RPC plus a WebSocket node; the listener watches Solana only."""
    nodes = []

    def start(**options) -> SolanaWebSocket:
        node = SolanaWebSocket(**options)
        nodes.append(node)
        settings.CHAINWATCH_ENDPOINTS = {"Solana": {"rpc_url": solana.server.url, "ws_url": node.url}}
        settings.ENABLED_NETWORKS = [Network.SOLANA]
        return node

    yield start
    for node in nodes:
        node.close()


def sol_draft(owner, n: int, *, receiver: str = SOL_RECEIVER, **fields):
    defaults = {
        "network": Network.SOLANA,
        "currency": Currency.SOL,
        "receiver_address": receiver,
        "amount_base_units": 1_500_000_000,
        "solana_reference": f"Ref{n:040d}",
        "required_confirmations": 1,
    }
    return make_draft(owner, **{**defaults, **fields})


def listening(running, settings, node: SolanaWebSocket, subscriptions: int):
    """The listener subscribed (`subscriptions` of them), then unable to poll or re-read its list
    for 120 s: what follows within seconds is the notifications' doing."""
    settings.CHAINWATCH_INTERVAL_SECONDS = 120
    settings.CHAINWATCH_POLL_MIN_SECONDS = 1  # how often the subscribed addresses are read again
    run = running()
    [watch] = run.watches
    run.wait_for(lambda: watch.live and watch.passes_run >= 1, timeout=10)
    run.wait_for(lambda: len(node.subscriptions) == subscriptions, timeout=5)
    settings.CHAINWATCH_POLL_MIN_SECONDS = 120
    time.sleep(1.2)  # the listener's current refresh wait (1 s) ends; the next is 120 s away
    return watch


def test_an_spl_payment_is_seen_and_confirmed_by_its_token_accounts_notifications_alone(
    owner, solana, solana_node, running, settings
):
    node = solana_node()
    draft = sol_draft(owner, 1, currency=Currency.USDC, amount_base_units=25_000_000)
    token_address = associated_token_address(SOL_RECEIVER, USDC_MINT)
    watch = listening(running, settings, node, subscriptions=2)
    # The receiver's token account, where the tokens land, at both commitments; not the wallet.
    assert node.subscribed("accountSubscribe") == {(token_address, "confirmed"), (token_address, "finalized")}
    assert {encoding for *_, encoding in node.subscriptions.values()} == {"base64"}
    passes = watch.passes_run

    signature = solana.pay_token(
        reference=draft.solana_reference, receiver=SOL_RECEIVER, mint=USDC_MINT, amount=25_000_000
    )
    paid = token_account(mint=USDC_MINT, owner=SOL_RECEIVER, amount=7 + 25_000_000)
    node.account_changed(token_address, "confirmed", paid)
    assert changed_within(draft, DraftStatus.SEEN, 5) < 1.5

    solana.finalize(signature)
    node.account_changed(token_address, "finalized", paid)
    assert changed_within(draft, DraftStatus.CONFIRMED, 5) < 1.5
    assert watch.live and watch.passes_run - passes <= 3
    assert node.refused == [] and node.subscribed("logsSubscribe") == set()


def test_a_paid_drafts_account_is_unsubscribed_when_the_list_is_read_again(
    owner, solana, solana_node, running, settings
):
    node = solana_node()
    paid = sol_draft(owner, 1)
    sol_draft(owner, 2, receiver=OTHER_SOL_RECEIVER)  # still open: stays subscribed
    settings.CHAINWATCH_INTERVAL_SECONDS = 120
    settings.CHAINWATCH_POLL_MIN_SECONDS = 0.3
    run = running()
    [watch] = run.watches
    run.wait_for(lambda: watch.live and len(node.subscriptions) == 4, timeout=10)
    assert {address for address, _ in node.subscribed("accountSubscribe")} == {SOL_RECEIVER, OTHER_SOL_RECEIVER}
    ids = {n for n, (_, address, *_) in node.subscriptions.items() if address == SOL_RECEIVER}

    signature = solana.pay_sol(reference=paid.solana_reference, receiver=SOL_RECEIVER, lamports=1_500_000_000)
    solana.finalize(signature)
    node.account_changed(SOL_RECEIVER, "finalized", wallet_account(5_000_000 + 1_500_000_000))
    changed_within(paid, DraftStatus.CONFIRMED, 5)

    run.wait_for(lambda: len(node.subscriptions) == 2, timeout=5)
    assert node.subscribed("accountSubscribe") == {(OTHER_SOL_RECEIVER, "confirmed"), (OTHER_SOL_RECEIVER, "finalized")}
    assert sorted(node.unsubscribed) == sorted(("accountUnsubscribe", n) for n in ids)


def test_a_node_without_account_subscribe_is_followed_by_logs_notifications(
    owner, solana, solana_node, running, settings
):
    node = solana_node(account_subscribe=False)
    draft = sol_draft(owner, 1)
    listening(running, settings, node, subscriptions=2)
    assert node.refused == ["accountSubscribe", "accountSubscribe"]
    assert node.subscribed("logsSubscribe") == {(SOL_RECEIVER, "confirmed"), (SOL_RECEIVER, "finalized")}

    signature = solana.pay_sol(reference=draft.solana_reference, receiver=SOL_RECEIVER, lamports=1_500_000_000)
    node.notify(SOL_RECEIVER, "confirmed", signature)
    assert changed_within(draft, DraftStatus.SEEN, 5) < 1.5

    solana.finalize(signature)
    node.notify(SOL_RECEIVER, "finalized", signature)
    assert changed_within(draft, DraftStatus.CONFIRMED, 5) < 1.5

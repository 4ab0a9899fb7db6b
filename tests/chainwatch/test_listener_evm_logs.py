"""The EVM listener's Transfer-logs subscription against a real anvil node: a matching log wakes
a pass by itself (anvil's newHeads notifications held back on the way), the filter follows the
drafts, and a transaction still in anvil's pool is not Seen (no node sends pending logs)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

from chainwatch import evm, push_evm
from chainwatch.evm import TRANSFER_TOPIC, address_topic
from drafts.enums import DraftStatus
from drafts.selectors import watched_receivers
from payments.enums import Currency, Network
from tests.chainwatch.conftest import free_port
from tests.factories import make_draft

pytestmark = pytest.mark.django_db(transaction=True)


class NodeSocket:
    """A WebSocket in front of anvil's that passes everything on, writes down what the
    listener asks, and (when `hold_heads`) never delivers the node's newHeads notifications."""

    def __init__(self, upstream: str, *, hold_heads: bool) -> None:
        self.upstream, self.hold_heads = upstream, hold_heads
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}"
        self.requests: list[dict] = []
        self.logs_filters: dict[str, dict] = {}  # subscription id -> filter, as the node answered
        self.delivered = {"newHeads": 0, "logs": 0}
        self.held = 0
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def handler(client) -> None:
            kinds: dict[int, list] = {}  # request id -> eth_subscribe params
            subscriptions: dict[str, str] = {}  # subscription id -> kind
            async with connect(self.upstream) as node:

                async def up() -> None:
                    async for raw in client:
                        request = json.loads(raw)
                        self.requests.append(request)
                        if request.get("method") == "eth_subscribe":
                            kinds[request["id"]] = request["params"]
                        await node.send(raw)

                async def down() -> None:
                    async for raw in node:
                        message = json.loads(raw)
                        params = kinds.pop(message.get("id"), None)
                        if params and isinstance(message.get("result"), str):
                            subscriptions[message["result"]] = params[0]
                            if params[0] == "logs":
                                self.logs_filters[message["result"]] = params[1]
                        if message.get("method") == "eth_subscription":
                            kind = subscriptions.get(message["params"]["subscription"], "")
                            if kind == "newHeads" and self.hold_heads:
                                self.held += 1
                                continue
                            self.delivered[kind] = self.delivered.get(kind, 0) + 1
                        await client.send(raw)

                await asyncio.gather(up(), down())

        async def main() -> None:
            self.stopped = asyncio.Event()
            async with serve(handler, "127.0.0.1", self.port):
                self.ready.set()
                await self.stopped.wait()

        self.loop.run_until_complete(main())

    def unsubscribed(self) -> set[str]:
        return {r["params"][0] for r in self.requests if r.get("method") == "eth_unsubscribe"}

    def live_filter(self) -> dict | None:
        live = [f for sid, f in self.logs_filters.items() if sid not in self.unsubscribed()]
        return live[-1] if live else None

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stopped.set)
        self.thread.join(10)


@pytest.fixture
def node_socket(ethereum, settings):
    sockets: list[NodeSocket] = []

    def start(*, hold_heads: bool) -> NodeSocket:
        socket = NodeSocket(ethereum.url.replace("http://", "ws://"), hold_heads=hold_heads)
        sockets.append(socket)
        settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": ethereum.url, "ws_url": socket.url}}
        return socket

    yield start
    for socket in sockets:
        socket.close()


def seen_within(draft, seconds: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        draft.refresh_from_db()
        if draft.status != DraftStatus.PENDING:
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"the draft stayed {draft.status}")


def receivers_of(log_filter: dict | None) -> set[str]:
    return set(log_filter["topics"][2]) if log_filter else set()


def subscribed(running, settings):
    """The listener running and subscribed, with no safety-net pass (no polling while
    subscribed) and the logs filter read again every second."""
    settings.CHAINWATCH_INTERVAL_SECONDS = 120
    settings.CHAINWATCH_POLL_MIN_SECONDS = 1
    run = running()
    [watch] = run.watches
    run.wait_for(lambda: watch.live and watch.passes_run >= 1, timeout=10)
    return run


def usdc_draft(owner, ethereum):
    return make_draft(
        owner, currency=Currency.USDC, receiver_address=ethereum.new_address(), amount_base_units=25_000_000
    )


def test_a_matching_transfer_log_wakes_a_pass_without_any_new_head(owner, ethereum, node_socket, running, settings):
    node = node_socket(hold_heads=True)  # anvil's newHeads never reach the listener
    run = subscribed(running, settings)
    assert node.logs_filters == {}  # no token draft watched: nothing to filter for

    first = usdc_draft(owner, ethereum)
    run.wait_for(lambda: receivers_of(node.live_filter()) == {address_topic(first.receiver_address)}, timeout=5)
    log_filter = node.live_filter()
    assert log_filter["address"] == [ethereum.token.address]
    assert log_filter["topics"][:2] == [TRANSFER_TOPIC, None]

    second = make_draft(
        owner, currency=Currency.USDC, receiver_address=ethereum.new_address(), amount_base_units=30_000_000
    )
    both = {address_topic(first.receiver_address), address_topic(second.receiver_address)}
    run.wait_for(lambda: receivers_of(node.live_filter()) == both, timeout=5)
    run.wait_for(lambda: len(node.unsubscribed()) == 1, timeout=5)  # the first filter, replaced

    ethereum.pay_token(ethereum.token, second.receiver_address, 30_000_000)

    assert seen_within(second, 5) < 1.5
    assert node.held >= 1 and node.delivered["newHeads"] == 0  # the block was announced, and held back
    assert node.delivered["logs"] == 1  # the Transfer log woke the pass
    first.refresh_from_db()
    assert first.status == DraftStatus.PENDING


def test_held_back_heads_and_no_logs_subscription_leave_the_payment_to_the_next_poll(
    owner, ethereum, node_socket, running, settings, monkeypatch
):
    """The control for the test above: with more receivers than the cap there is no logs
    filter, and with newHeads held back nothing wakes a pass within seconds."""
    monkeypatch.setattr(push_evm, "LOGS_MAX_RECEIVERS", 0)
    node = node_socket(hold_heads=True)
    subscribed(running, settings)
    draft = usdc_draft(owner, ethereum)
    time.sleep(1.5)  # a refresh of the filter comes and goes

    ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)

    time.sleep(2)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING
    assert node.logs_filters == {} and node.held >= 1


def test_the_logs_filter_names_the_watched_tokens_and_receivers_up_to_the_cap(owner, ethereum):
    usdc_to = [ethereum.new_address(), ethereum.new_address()]
    for receiver in usdc_to:
        make_draft(owner, currency=Currency.USDC, receiver_address=receiver, amount_base_units=25_000_000)
    make_draft(owner, currency=Currency.ETH, receiver_address=ethereum.new_address(), amount_base_units=10**9)
    targets = watched_receivers(network=Network.ETHEREUM)

    log_filter = evm.transfer_log_filter(Network.ETHEREUM, targets, max_receivers=2)

    assert log_filter == {
        "address": [ethereum.token.address],
        "topics": [TRANSFER_TOPIC, None, sorted(address_topic(r) for r in usdc_to)],
    }  # native ETH moves no log: newHeads finds it
    assert evm.transfer_log_filter(Network.ETHEREUM, targets, max_receivers=1) is None


def test_a_transfer_waiting_in_the_pool_is_not_seen_until_its_block(owner, ethereum, running, settings):
    """anvil, like geth since v1.14, sends no pending logs: a payment not yet mined shows
    nothing; its block shows it at once."""
    subscribed(running, settings)
    draft = usdc_draft(owner, ethereum)
    time.sleep(1.5)  # the logs filter now names the receiver
    ethereum.w3.provider.make_request("evm_setAutomine", [False])

    ethereum.pay_token(ethereum.token, draft.receiver_address, 25_000_000)

    time.sleep(2)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING
    ethereum.mine(1)
    assert seen_within(draft, 5) < 1.5

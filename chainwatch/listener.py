"""Push-based detection: a watcher pass the moment a node announces a new block.

`manage.py chainwatch_listen` (one long-running process, started by `make run` beside the
worker) keeps, for each enabled watcher, a subscription to its node and runs the same pass
the beat task runs (`chainwatch.tasks.watcher_run`: scan, then the payment door through
`match_network`) as soon as something arrives:

- EVM: `eth_subscribe` `newHeads`, and `logs` of the watched tokens' Transfers to the watched
  receivers, over the node's WebSocket (WS_URL_<NETWORK>, or RPC_URL with ws:// for nodes
  such as anvil that serve both on one port): chainwatch/push_evm.py.
- Bitcoin Core: its ZMQ `hashblock` and `rawtx` notifications (BITCOIN_ZMQ_URL_<NETWORK>,
  one or more tcp:// addresses, comma-separated).
- Solana: `accountSubscribe` on each watched receiver account (the wallet for SOL, its token
  account for SPL tokens), `logsSubscribe` mentioning it on a node without accountSubscribe,
  over the RPC node's WebSocket (WS_URL_<NETWORK>, or RPC_URL with ws://);
  chainwatch/push_solana.py.

A pass already running when a notification arrives is followed by one more pass, never by a
queue of them, and two passes of one watcher start at least CHAINWATCH_MIN_PASS_SPACING_MS
apart: on a chain with blocks faster than that (Solana's slots, an L2's quarter-second blocks)
one pass takes in every block announced since the last, so the node calls a minute are bounded
whatever the block rate. Without a subscription (the node has no WebSocket or ZMQ, the connection
dropped, or the source has none to offer: Esplora, LUD-21) the listener polls, from
CHAINWATCH_POLL_MIN_SECONDS backing off to CHAINWATCH_INTERVAL_SECONDS while nothing new
turns up, and reconnects with a growing delay. The beat entries keep running as the fallback
of the fallback: a pass that finds another one moved the cursor first just stops.

Listeners on several machines share the work: each watcher's passes and subscription run only in
the listener holding its lease (`listener:<network>:<family>`, core/leases.py), renewed every
third of LEASE_SECONDS; the others stand by and take over within one lease once it dies, so
node calls are not doubled. A listener that loses the lease while alive (its database away for
longer than the lease, a process paused) closes its subscription too and stands by.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection

from chainwatch import networks
from core.leases import holder_name, lease_release, lease_seconds, lease_take

logger = logging.getLogger(__name__)

Wake = Callable[[], None]
# A subscription: runs until its connection ends, calling wake() once subscribed and for each
# notification; `live(True)` once the node confirmed the subscription.
Subscription = Callable[[Wake, Callable[[bool], None]], Awaitable[None]]

MAX_MESSAGE_BYTES = 1 << 20  # a newHeads header is ~1 KB; nothing we read is larger
RECONNECT_MAX_SECONDS = 30


class SubscriptionRefused(Exception):
    pass


async def refreshed_messages(ws: Any, refresh: Callable[[], Awaitable[None]]) -> AsyncIterator[dict[str, Any]]:
    """The JSON messages of a subscription's WebSocket, with `refresh()` (the watched set read
    again, subscriptions made and dropped to match) run every CHAINWATCH_POLL_MIN_SECONDS in
    between, whether or not messages come."""
    loop = asyncio.get_running_loop()
    refreshed = loop.time()
    while True:
        timeout = max(0.0, refreshed + settings.CHAINWATCH_POLL_MIN_SECONDS - loop.time())
        try:
            message = json.loads(await asyncio.wait_for(ws.recv(), timeout=timeout))
        except TimeoutError:
            await refresh()
            refreshed = loop.time()
            continue
        yield message


ZMQ_TOPICS = (b"hashblock", b"rawtx")


async def bitcoin_zmq(urls: list[str], wake: Wake, live: Callable[[bool], None]) -> None:
    """Bitcoin Core's ZMQ notifications (-zmqpubhashblock, -zmqpubrawtx): each message is three
    frames, topic | body | 4-byte little-endian sequence number. A new block wakes a pass at
    once; new transactions wake one at most every CHAINWATCH_POLL_MIN_SECONDS, since a busy
    mempool announces many a second and one mempool pass reads them all. Live while connected
    (ZMQ reconnects by itself; a SUB socket has no answer to wait for, so the socket monitor says)."""
    import zmq
    import zmq.asyncio
    from zmq.utils.monitor import recv_monitor_message

    context = zmq.asyncio.Context.instance()
    socket = context.socket(zmq.SUB)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVHWM, 10_000)
    for topic in ZMQ_TOPICS:
        socket.setsockopt(zmq.SUBSCRIBE, topic)
    monitor = socket.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED)
    connected: set[str] = set()

    async def watch_connections() -> None:
        while True:
            event = await recv_monitor_message(monitor)
            endpoint = (event.get("endpoint") or b"").decode()
            if event["event"] == zmq.EVENT_CONNECTED:
                connected.add(endpoint)
                wake()  # catch up on what was announced while disconnected
            else:
                connected.discard(endpoint)
            live(bool(connected))

    async def messages() -> None:
        throttle = float(settings.CHAINWATCH_POLL_MIN_SECONDS)
        last_tx_wake = -throttle
        later: asyncio.TimerHandle | None = None
        loop = asyncio.get_running_loop()

        def tx_wake() -> None:
            nonlocal last_tx_wake, later
            last_tx_wake, later = loop.time(), None
            wake()

        while True:
            frames = await socket.recv_multipart()
            if len(frames) != 3 or len(frames[2]) != 4:
                continue  # not a Bitcoin Core notification
            if frames[0] == b"hashblock":
                wake()
            elif frames[0] == b"rawtx" and later is None:
                # At once, or when the throttle allows: a transaction is never left for the poll.
                later = loop.call_at(max(loop.time(), last_tx_wake + throttle), tx_wake)

    try:
        for url in urls:
            socket.connect(url)
        await asyncio.gather(watch_connections(), messages())
    finally:
        socket.disable_monitor()
        monitor.close(linger=0)
        socket.close(linger=0)


def subscription_of(network: str, family: str) -> Subscription | None:
    """The push source of a watcher, or None when it has none and only polls."""
    ends = networks.endpoints(network)
    if family == networks.EVM and ends.ws_url:
        from chainwatch import push_evm

        return push_evm.subscription(network, ends.ws_url)
    if family == networks.BITCOIN and ends.zmq_url and networks.bitcoin_source(network) == "core":
        urls = [u.strip() for u in ends.zmq_url.split(",") if u.strip()]
        return lambda wake, live: bitcoin_zmq(urls, wake, live)
    if family == networks.SOLANA and ends.ws_url:
        from chainwatch import push_solana

        return push_solana.subscription(network, ends.ws_url, ends.rpc_url)
    return None


def run_pass(network: str, family: str) -> int:
    """One watcher run (bounded passes until caught up); the number of transfers it stored."""
    from chainwatch.tasks import watcher_run

    close_old_connections()
    try:
        return sum(report.transfers for report in watcher_run(network, family))
    finally:
        close_old_connections()


def _lease_renew(name: str, holder: str) -> bool:
    try:
        return lease_take(name, holder, lease_seconds())
    except Exception as exc:  # the database away: stand by until the lease is sure again
        logger.warning("%s: cannot renew the lease (%s: %s); standing by", name, type(exc).__name__, exc)
        connection.close()
        return False


def _lease_give_up(name: str, holder: str) -> None:
    try:
        lease_release(name, holder)
    except Exception as exc:  # it expires by itself
        logger.warning("%s: could not release the lease: %s", name, exc)


class Watch:
    """One watcher: its subscription (if any) wakes its passes; a poll timer backs it up. Both
    run only while this listener holds the watcher's lease (`lead`)."""

    def __init__(
        self, network: str, family: str, subscription: Subscription | None, run: Callable[[str, str], int] = run_pass
    ) -> None:
        self.network, self.family = network, family
        self.subscription = subscription
        self.run = run
        self.woken = asyncio.Event()
        self.live = False
        self.poll_seconds = float(settings.CHAINWATCH_POLL_MIN_SECONDS)
        # Passes of one watcher never overlap, and Django's connection stays on this thread.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"watch-{network}-{family}")
        self.passes_run = 0
        self.last_start = float("-inf")  # loop time the last pass started
        self.lease_name = f"listener:{network}:{family}"
        self.holder = holder_name()
        self.leading = asyncio.Event()
        self.standing_by = asyncio.Event()  # set while another listener leads (or none is sure)
        self.standing_by.set()
        # The lease is renewed from a thread of its own, never held up by a long pass.
        self.lease_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"lease-{network}-{family}")

    async def lead(self) -> None:
        """Take and renew this watcher's lease every third of LEASE_SECONDS; given up on stop."""
        try:
            while True:
                loop = asyncio.get_running_loop()
                held = await loop.run_in_executor(self.lease_executor, _lease_renew, self.lease_name, self.holder)
                if held != self.leading.is_set():
                    logger.info("chainwatch %s %s: %s", self.network, self.family, "leading" if held else "standing by")
                    (self.leading.set if held else self.leading.clear)()
                    (self.standing_by.clear if held else self.standing_by.set)()
                await asyncio.sleep(lease_seconds() / 3)
        finally:
            if self.leading.is_set():
                self.leading.clear()
                self.standing_by.set()
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(self.lease_executor, _lease_give_up, self.lease_name, self.holder)

    def wake(self) -> None:
        self.woken.set()

    def _set_live(self, live: bool) -> None:
        if live != self.live:
            logger.info("chainwatch %s %s: %s", self.network, self.family, "subscribed" if live else "polling")
        self.live = live

    def _next_poll(self, found: int) -> float:
        """Subscribed: the slow interval only as a safety net. Polling: short, backing off."""
        if self.live:
            return float(settings.CHAINWATCH_INTERVAL_SECONDS)
        if found:
            self.poll_seconds = float(settings.CHAINWATCH_POLL_MIN_SECONDS)
        else:
            self.poll_seconds = min(self.poll_seconds * 2, float(settings.CHAINWATCH_INTERVAL_SECONDS))
        return self.poll_seconds

    def _pass(self) -> int:
        """One pass, in the executor: its start is taken when it really begins (a busy machine may
        start the thread late), so the next one keeps the spacing from that moment (the event
        loop's clock is time.monotonic)."""
        self.last_start = time.monotonic()
        return self.run(self.network, self.family)

    async def pass_loop(self) -> None:
        loop = asyncio.get_running_loop()
        wait = 0.0
        while True:
            try:
                await asyncio.wait_for(self.woken.wait(), timeout=wait)
            except TimeoutError:
                pass
            await self.leading.wait()  # standing by while another listener leads
            # Notifications closer together than the spacing share the next pass: those arriving
            # while it waits are cleared with the rest, so at most one pass follows.
            spacing = settings.CHAINWATCH_MIN_PASS_SPACING_MS / 1000
            await asyncio.sleep(max(0.0, self.last_start + spacing - loop.time()))
            self.woken.clear()
            try:
                found = await loop.run_in_executor(self.executor, self._pass)
            except Exception:  # watcher_run records node failures itself; anything else must not stop us
                logger.exception("chainwatch %s %s: pass failed", self.network, self.family)
                found = 0
            self.passes_run += 1
            wait = self._next_poll(found)

    async def _subscribed_while_leading(self) -> str | None:
        """The subscription until its connection ends (the reason), or until this listener stops
        leading (None): then it is closed, so a listener standing by keeps no connection to the
        node and receives nothing (node calls are not doubled while another one leads)."""
        assert self.subscription is not None
        subscribed = asyncio.ensure_future(self.subscription(self.wake, self._set_live))
        lost = asyncio.ensure_future(self.standing_by.wait())
        try:
            await asyncio.wait({subscribed, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (subscribed, lost):
                task.cancel()
            await asyncio.gather(subscribed, lost, return_exceptions=True)
        if not subscribed.done() or subscribed.cancelled():
            return None
        exc = subscribed.exception()
        return "connection closed" if exc is None else f"{type(exc).__name__}: {exc}"

    async def subscribe(self) -> None:
        if self.subscription is None:
            return
        delay = 1.0
        while True:
            await self.leading.wait()
            started = asyncio.get_running_loop().time()
            try:
                reason = await self._subscribed_while_leading()
            except Exception as exc:  # noqa: BLE001 - any failure of a subscription means: poll, reconnect
                reason = f"{type(exc).__name__}: {exc}"
            self._set_live(False)
            if reason is None:
                logger.info("chainwatch %s %s: subscription closed (standing by)", self.network, self.family)
                continue
            if asyncio.get_running_loop().time() - started > RECONNECT_MAX_SECONDS:
                delay = 1.0
            logger.warning(
                "chainwatch %s %s: subscription lost (%s); polling, reconnecting in %.0f s",
                self.network,
                self.family,
                reason,
                delay,
            )
            self.wake()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_SECONDS)

    async def main(self) -> None:
        try:
            await asyncio.gather(self.lead(), self.pass_loop(), self.subscribe())
        finally:
            # The pass under way finishes; then the pass thread's own database connection closes.
            for executor in (self.executor, self.lease_executor):
                executor.submit(lambda: connection.close())
                executor.shutdown(wait=True)


def watches() -> list[Watch]:
    """A Watch for every enabled, configured watcher. Lightning with an LND or LNbits node stays
    with the beat task, which follows LND's invoice stream and LNbits' feed; Lightning with
    LUD-21 verify URLs only is polled here like Esplora."""
    lightning_node = bool(settings.LND_REST_URL or settings.LNBITS_URL)
    return [
        Watch(network, family, subscription_of(network, family))
        for network, family in networks.watchers()
        if not (family == networks.LIGHTNING and lightning_node)
    ]


async def listen(found: list[Watch] | None = None) -> None:
    found = watches() if found is None else found
    for watch in found:
        logger.info(
            "chainwatch %s %s: %s",
            watch.network,
            watch.family,
            "subscribing" if watch.subscription else f"polling every {settings.CHAINWATCH_POLL_MIN_SECONDS}+ s",
        )
    if not found:
        logger.info("chainwatch listener: no watcher is configured; idle")
        await asyncio.Event().wait()
    await asyncio.gather(*(watch.main() for watch in found))

"""EVM push: `eth_subscribe` over the node's WebSocket wakes a watcher pass.

One connection carries two subscriptions (geth's documented pub/sub; anvil serves the same):

- `newHeads`: every new block wakes a pass, which reads the block's Transfer logs and moves
  every watched draft's confirmations. Without it the connection is refused and the
  listener polls.
- `logs` filtered to the ERC-20 Transfer event (topic0) of the watched token contracts
  (`address`) to the watched receivers (topic2): a matching transfer wakes a pass of its
  own, so a payment is looked for even where the node's `newHeads` notification is late or
  missing (a provider that rations head notifications, one dropped by a busy node). The
  filter follows the drafts: it is read again every CHAINWATCH_POLL_MIN_SECONDS and, when
  it changed, subscribed anew (then the old one dropped). Beyond LOGS_MAX_RECEIVERS
  receivers, and where the node refuses a logs subscription, `newHeads` alone wakes passes.
  Native ETH moves no log: `newHeads` finds it.

A notification only says "look now": the pass reads mined blocks over HTTP JSON-RPC
(chainwatch/evm.py) with every rule of the pass; nothing in a notification is trusted.

Pending logs. The issue asked for them "where the node offers them"; no node we could check
offers them today, so a token payment on an EVM chain is Seen when its block is:

- geth removed pending logs in v1.14.0 (ethereum/go-ethereum#29574, "eth/filters: remove
  support for pending logs"); its `eth_getLogs` answers "pending logs are not supported"
  (go-ethereum#29908).
- reth accepts `logs` with `fromBlock`/`toBlock` `pending` but streams mined logs only, and
  `pendingLogs` never delivers (paradigmxyz/reth#26326; #5617 before it).
- anvil (1.7.1, measured with `--no-mining` and `--block-time`): `logs` with `pending`
  bounds is accepted and delivers the log when the block is mined, not before;
  `pendingLogs` is refused (-32602); `eth_getLogs` with `pending` answers the latest mined
  block's logs. Only `newPendingTransactions` announces the transaction before its block.

A log that comes without a block (a node that still sends pending logs) wakes a pass like
any other; the pass shows the payment once it is mined. docs/decisions.md ("EVM: newHeads
and Transfer logs, no pending logs") keeps the reasoning.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Callable
from typing import Any

import websockets
from django.db import connection

from chainwatch import evm
from chainwatch.listener import MAX_MESSAGE_BYTES, Subscription, SubscriptionRefused, Wake, refreshed_messages
from drafts.selectors import watched_receivers

logger = logging.getLogger(__name__)

LOGS_MAX_RECEIVERS = 1000  # receivers in one logs filter; beyond, newHeads alone

LogFilter = dict[str, Any] | None


async def evm_heads_and_logs(
    ws_url: str, log_filter: Callable[[], LogFilter], wake: Wake, live: Callable[[bool], None]
) -> None:
    """`newHeads` and the watched Transfer `logs` on one WebSocket; any of their notifications
    wakes a pass. `log_filter()` (run on the loop's thread pool) gives the logs filter or None."""
    loop = asyncio.get_running_loop()
    async with websockets.connect(ws_url, max_size=MAX_MESSAGE_BYTES, open_timeout=10, ping_interval=20) as ws:
        ids = itertools.count(2)
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_subscribe", "params": ["newHeads"]}))
        answer = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
        heads = answer.get("result")
        if not isinstance(heads, str):
            raise SubscriptionRefused(f"eth_subscribe newHeads: {answer.get('error')!r:.200}")
        ours = {heads}  # subscription ids whose notifications wake a pass
        asked: dict[int, LogFilter] = {}  # request id -> the logs filter it subscribes
        logs_id: str | None = None
        logs_filter: LogFilter = None  # the filter last asked for (answered or not)
        retired: list[str] = []  # logs subscriptions replaced or no longer wanted, to unsubscribe

        async def send(method: str, params: list[Any]) -> int:
            request = next(ids)
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": request, "method": method, "params": params}))
            return request

        async def refresh() -> None:
            nonlocal logs_id, logs_filter
            wanted = await loop.run_in_executor(None, log_filter)
            if wanted == logs_filter:
                return
            logs_filter = wanted
            if wanted is not None:
                asked[await send("eth_subscribe", ["logs", wanted])] = wanted
            elif logs_id is not None:  # nothing left to filter for
                ours.discard(logs_id)
                await send("eth_unsubscribe", [logs_id])
                logs_id = None

        def answered(message: dict[str, Any]) -> None:
            nonlocal logs_id
            wanted = asked.pop(message["id"])
            subscription = message.get("result")
            if not isinstance(subscription, str):
                logger.info("eth_subscribe logs refused (%.200r); newHeads alone", message.get("error"))
                return
            if logs_filter is None:  # nothing left to filter for since it was asked
                retired.append(subscription)
                return
            ours.add(subscription)
            previous, logs_id = logs_id, subscription
            logger.debug("subscribed to Transfer logs for %d receivers", len(wanted["topics"][2]) if wanted else 0)
            if previous is not None:
                ours.discard(previous)
                retired.append(previous)

        await refresh()
        live(True)
        wake()  # catch up on whatever came while we were not subscribed
        async for message in refreshed_messages(ws, refresh):
            if message.get("method") == "eth_subscription":
                if (message.get("params") or {}).get("subscription") in ours:
                    wake()
            elif message.get("id") in asked:
                answered(message)
                while retired:
                    await send("eth_unsubscribe", [retired.pop()])


def subscription(network: str, ws_url: str) -> Subscription:
    """The listener's Subscription for an EVM watcher: heads, and the logs of its token drafts."""

    def log_filter() -> LogFilter:  # on a thread of the loop's pool: its connection is not kept
        try:
            return evm.transfer_log_filter(network, watched_receivers(network=network), LOGS_MAX_RECEIVERS)
        finally:
            connection.close()

    return lambda wake, live: evm_heads_and_logs(ws_url, log_filter, wake, live)

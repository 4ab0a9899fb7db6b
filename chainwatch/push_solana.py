"""Solana's push source for the chain listener: a wake-up when a watched receiver account changes.

A payment to a draft lands on one account: the receiver's wallet for SOL (its lamports grow)
or the receiver's associated token account for an SPL token (the amount in its data grows;
the owner's wallet is neither written nor, necessarily, named by the transaction). For each
such address of a payable draft (open, or expired inside the late-payment grace window) the
listener holds, over the RPC node's WebSocket:

- `accountSubscribe` (params [address, {"commitment", "encoding": "base64"}]) at `confirmed`
  (a payment there makes a draft Seen) and `finalized` (Confirmed). Each `accountNotification`
  wakes the watcher's pass; the pass reads the chain as always, the notification's content
  (slot, lamports, data) is not used. Chosen first because it fires exactly when the account
  that receives the money changes, whatever routes the transfer there (another program's
  call, an address lookup table), and not for failed transactions or ones that only name the
  address; every Solana RPC provider offers it; and it may be held for a token account that
  does not exist yet (the first payment creates it, which is a change). base64 keeps a
  notification small: a wallet has no data, a token account 165 bytes.
- `logsSubscribe` ({"mentions": [address]}) instead, for the rest of the connection, when the
  node refuses `accountSubscribe` before accepting any: each `logsNotification` (a transaction
  naming the address, failed ones too) wakes the pass the same way. `mentions` takes one
  address a subscription, and some providers limit or meter it, so it is the fallback only.

Either way it is one subscription per address and commitment, SOLANA_MAX_SUBSCRIBED addresses
at most per watcher (beyond, and for a new address until the next read of the list, the
passes that run anyway find the payment). The list is read again every
CHAINWATCH_POLL_MIN_SECONDS: new addresses are subscribed, addresses no payable draft uses
any more (paid, cancelled, long expired) are unsubscribed (`accountUnsubscribe` /
`logsUnsubscribe`). A refused subscription after the first accepted one ends the connection:
the listener polls and reconnects.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import websockets
from django.db import connection

from chainwatch import solana
from chainwatch.listener import MAX_MESSAGE_BYTES, Subscription, SubscriptionRefused, Wake, refreshed_messages

logger = logging.getLogger(__name__)

SOLANA_MAX_SUBSCRIBED = 1000  # addresses; beyond, polling by block is cheaper for the node
COMMITMENTS = ("confirmed", "finalized")  # Seen, Confirmed


@dataclass(frozen=True)
class Kind:
    """One of the two notification kinds: its methods, and the params of a subscription."""

    subscribe: str
    unsubscribe: str
    notification: str

    def params(self, address: str, commitment: str) -> list[Any]:
        if self.subscribe == "accountSubscribe":
            return [address, {"commitment": commitment, "encoding": "base64"}]
        return [{"mentions": [address]}, {"commitment": commitment}]


ACCOUNT = Kind("accountSubscribe", "accountUnsubscribe", "accountNotification")
LOGS = Kind("logsSubscribe", "logsUnsubscribe", "logsNotification")
NOTIFICATIONS = (ACCOUNT.notification, LOGS.notification)


async def solana_notifications(
    ws_url: str, addresses: Callable[[], list[str]], wake: Wake, live: Callable[[bool], None]
) -> None:
    """Hold a subscription per watched address and commitment (see the module's docstring);
    wake on each notification, read the address list again every CHAINWATCH_POLL_MIN_SECONDS."""
    loop = asyncio.get_running_loop()
    async with websockets.connect(ws_url, max_size=MAX_MESSAGE_BYTES, open_timeout=10, ping_interval=20) as ws:
        kind = ACCOUNT
        accepted = False  # the node accepted a subscription of `kind`
        next_id = 0
        pending: dict[int, tuple[Kind, str]] = {}  # request id -> (kind asked, address)
        active: dict[str, list[tuple[Kind, int]]] = {}  # address -> (kind, subscription id)
        asked: set[str] = set()

        async def send(method: str, params: list[Any]) -> int:
            nonlocal next_id
            next_id += 1
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}))
            return next_id

        async def subscribe(address: str) -> None:
            for commitment in COMMITMENTS:
                pending[await send(kind.subscribe, kind.params(address, commitment))] = (kind, address)

        async def refresh() -> None:
            wanted = set((await loop.run_in_executor(None, addresses))[:SOLANA_MAX_SUBSCRIBED])
            for address in sorted(wanted - asked):
                await subscribe(address)
                asked.add(address)
            for address in sorted(asked - wanted):
                for used, subscription in active.pop(address, []):
                    await send(used.unsubscribe, [subscription])
                asked.discard(address)

        async def answered(message: dict[str, Any]) -> None:
            nonlocal kind, accepted
            used, address = pending.pop(message["id"])
            result = message.get("result")
            if isinstance(result, int) and not isinstance(result, bool):
                if used is kind and address in asked:
                    accepted = True
                    active.setdefault(address, []).append((used, result))
                else:  # dropped from the list, or of the kind given up, while it was asked
                    await send(used.unsubscribe, [result])
            elif used is ACCOUNT and kind is ACCOUNT and not accepted:
                logger.info(
                    "solana: the node refused accountSubscribe (%.200r); subscribing logs", message.get("error")
                )
                kind = LOGS
                for address in sorted(asked):
                    await subscribe(address)
            elif used is kind:
                raise SubscriptionRefused(f"{used.subscribe} {address}: {message.get('error')!r:.200}")

        await refresh()
        live(True)
        wake()  # catch up on whatever came while we were not subscribed
        async for message in refreshed_messages(ws, refresh):
            if message.get("method") in NOTIFICATIONS:
                wake()
            elif message.get("id") in pending:
                await answered(message)


def subscription(network: str, ws_url: str, rpc_url: str) -> Subscription:
    """The listener's Solana subscription: the addresses come from the watched drafts."""

    def addresses() -> list[str]:  # on a thread of the loop's pool: its connection is not kept
        try:
            return solana.subscription_addresses(network, rpc_url)
        finally:
            connection.close()

    return lambda wake, live: solana_notifications(ws_url, addresses, wake, live)

"""`manage.py devpay <id>`: pay a draft (or a pay link's current draft) on the local test chain."""

from __future__ import annotations

import time
import uuid
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from web3 import Web3

from chainwatch import devchain, networks
from drafts.enums import DraftStatus
from drafts.models import Draft
from payments.registry import NETWORKS, format_amount, get_asset


class Command(BaseCommand):
    help = (
        "Pay a draft from anvil's funded account on the local test chain (`manage.py devchain`): the amount, "
        "asset and receiver the draft asks for. Takes a draft id or a pay link's id (its current draft)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("id", help="A draft id, or a payment request (pay link) id once the payer picked an asset")
        parser.add_argument("--wait", action="store_true", help="Wait until the watcher has confirmed the draft")
        parser.add_argument("--timeout", type=int, default=120, help="Seconds --wait waits (default 120)")

    def handle(self, *args: Any, **options: Any) -> None:
        draft = self._draft(options["id"])
        if draft.status != DraftStatus.PENDING:
            raise CommandError(f"The draft {draft.id} is {draft.status}; only a Pending draft is paid.")
        info = NETWORKS.get(draft.network)
        if info is None or info.family != "evm" or not info.is_testnet:
            raise CommandError(
                f"The draft is on {draft.network}; devpay pays on the local test chains only "
                f"({', '.join(devchain.DEV_NETWORKS)})."
            )
        rpc_url = networks.endpoints(draft.network).rpc_url  # the first, when several are configured
        if not rpc_url:
            raise CommandError(f"No RPC_URL for {draft.network}: run `manage.py devchain` and restart the service.")
        self._check_node(rpc_url, info.chain_id, draft.network)
        try:
            tx = devchain.pay(
                rpc_url=rpc_url,
                receiver=draft.receiver_address or "",
                amount_base_units=draft.amount_base_units,
                token_address=draft.token_address,
            )
        except devchain.DevchainError as exc:
            raise CommandError(str(exc)) from exc
        amount = format_amount(draft.amount_base_units, get_asset(draft.currency, draft.network))
        self.stdout.write(f"Paid draft {draft.id}: {amount} {draft.currency} on {draft.network}, tx {tx}.")
        if options["wait"]:
            self._wait(draft, options["timeout"])
        else:
            self.stdout.write(
                f"The watcher sees it within CHAINWATCH_INTERVAL_SECONDS ({settings.CHAINWATCH_INTERVAL_SECONDS} s) "
                f"and confirms it after {draft.required_confirmations} blocks."
            )

    def _draft(self, raw: str) -> Draft:
        try:
            key = uuid.UUID(raw)
        except ValueError:
            raise CommandError(f"{raw!r} is no id (a UUID).") from None
        draft = Draft.objects.filter(pk=key).first()
        if draft is not None:
            return draft
        # A pay link's drafts carry its id; the payer's latest pick is the one the pay page shows.
        picked = Draft.objects.filter(payment_request_id=key).order_by("-created_at").first()
        if picked is None:
            raise CommandError(
                f"No draft {key}, and no pay link with that id whose payer has picked an asset on the pay page yet."
            )
        return picked

    def _check_node(self, rpc_url: str, chain_id: int | None, network: str) -> None:
        """Only anvil with the network's chain id: never a public node (its first account is nobody's)."""
        w3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 10}))
        try:
            client, node_chain = w3.client_version, w3.eth.chain_id
        except Exception as exc:  # noqa: BLE001 - any failure to reach the node is the message
            raise CommandError(f"The {network} node at {rpc_url} does not answer ({exc}): is devchain on?") from exc
        if not client.lower().startswith("anvil"):
            raise CommandError(f"The {network} node at {rpc_url} is {client}: devpay pays on the local anvil only.")
        if node_chain != chain_id:
            raise CommandError(f"The node at {rpc_url} has chain id {node_chain}; {network} is {chain_id}.")

    def _wait(self, draft: Draft, timeout: int) -> None:
        deadline, last = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            draft.refresh_from_db()
            if draft.status != last:
                self.stdout.write(f"Status: {draft.status} ({draft.confirmations} confirmations)")
                last = draft.status
            if draft.status not in (DraftStatus.PENDING, DraftStatus.SEEN):
                return
            time.sleep(1)
        raise CommandError(f"Still {draft.status} after {timeout} s: is the service (its beat and worker) running?")

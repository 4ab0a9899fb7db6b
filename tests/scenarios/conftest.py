"""The adversarial payment scenarios: what payers really send, against a real chain.

One anvil node per network and module (Ethereum, chain id 1; Base, chain id 8453), each with a
test USDC. Drafts are made through the REST API, payments are real transactions, blocks are
mined with anvil_mine, and the watcher runs through its beat task (`chainwatch_run`). Each test
uses fresh receiver addresses, so tests sharing a node never see each other's payments (the
watcher's cursor lives in the database and starts again for every test).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from rest_framework.test import APIClient

from chainwatch import traces
from chainwatch.models import Cursor, ObservedTransfer, UnmatchedTransfer
from chainwatch.tasks import chainwatch_run
from drafts.enums import DraftStatus
from drafts.models import Draft
from fees.models import AccruedFee
from payments.enums import FeePlacement
from tests.chainwatch.conftest import (  # noqa: F401 - bitcoin, fake_server, solana: the local servers
    Anvil,
    _start_anvil,
    bitcoin,
    fake_server,
    solana,
)
from tests.webhooks.conftest import deliver_due, make_receiver  # noqa: F401 - a local receiver
from webhooks.models import Event

CHAIN_IDS = {"Ethereum": 1, "Base": 8453}
DEFAULT_CONFIRMATIONS = 12  # Ethereum and Base (docs/decisions.md); unmatched reports wait for it


@pytest.fixture(scope="module")
def nodes() -> Iterator[dict[str, Anvil]]:
    """anvil nodes started on first use and kept for the module."""
    started: dict[str, tuple] = {}

    class Nodes(dict):
        def __missing__(self, network: str) -> Anvil:
            process, url = _start_anvil(CHAIN_IDS[network])
            node = Anvil(url, CHAIN_IDS[network])
            started[network] = (process, node)
            node.token = node.deploy_token("USDC", 6)
            self[network] = node
            return node

    yield Nodes()
    for process, _ in started.values():
        process.kill()
        process.wait(timeout=10)


class Chain:
    """One network as a merchant and their payers see it: the API, the chain and the watcher."""

    def __init__(self, network: str, node: Anvil, api: APIClient) -> None:
        self.network = network
        self.node = node
        self.api = api
        self.token = node.token

    # --- the merchant, through the REST API ------------------------------------------------

    def draft(self, *, receiver: str | None = None, currency: str = "USDC", **body) -> dict:
        request = {"network": self.network, "currency": currency, "receiverAddress": receiver or self.new_address()}
        response = self.api.post("/api/v1/drafts", {**request, **body}, format="json")
        assert response.status_code == 201, response.json()
        return response.json()

    def get(self, draft: dict) -> dict:
        return self.api.get(f"/api/v1/drafts/{draft['id']}").json()

    def status(self, draft: dict) -> dict:
        return self.api.get(f"/api/v1/drafts/{draft['id']}/status").json()

    def transfers(self, matched: bool | None = None) -> list[dict]:
        query = "" if matched is None else f"?matched={str(matched).lower()}"
        body = self.api.get(f"/api/v1/transfers{query}").json()
        return body["items"]

    # --- the payer and the chain ---------------------------------------------------------

    @staticmethod
    def new_address() -> str:
        return Anvil.new_address()

    def pay(
        self, draft_or_address: dict | str, amount: int, currency: str = "USDC", *, sender: str = "", mined: bool = True
    ) -> str:
        """Send `amount` base units (USDC: 6 decimals; ETH: gwei) from the payer's wallet (or
        `sender`'s); with `mined`, return once anvil has mined it (its automine does not wait)."""
        to = draft_or_address if isinstance(draft_or_address, str) else draft_or_address["receiverAddress"]
        sender = sender or self.node.payer
        if currency == "ETH":
            tx = self.node.w3.eth.send_transaction({"from": sender, "to": to, "value": amount * 10**9})
        else:
            if sender != self.node.payer:
                funded = self.token.functions.mint(sender, amount).transact({"from": sender})  # anyone may mint
                self.node.w3.eth.wait_for_transaction_receipt(funded, timeout=30, poll_latency=0.05)
            tx = self.token.functions.transfer(to, amount).transact({"from": sender})
        if mined:
            self.node.w3.eth.wait_for_transaction_receipt(tx, timeout=30, poll_latency=0.05)
        return tx.to_0x_hex()

    def mine(self, blocks: int = 1) -> None:
        self.node.mine(blocks)

    def settle(self) -> None:
        """Mine until everything sent so far has the networks' default confirmations, and watch."""
        self.mine(DEFAULT_CONFIRMATIONS)
        self.tick()

    # --- the service's beat task -----------------------------------------------------------

    def tick(self) -> None:
        chainwatch_run(self.network, "evm")
        cursor = Cursor.objects.get(network=self.network, family="evm")
        assert cursor.last_error == "", cursor.last_error
        assert cursor.height == self.node.head  # caught up: every block so far was read


def chain_for(network: str, nodes, settings, api_client) -> Chain:
    traces.forget()  # each test is a fresh watcher process as far as trace detection goes
    node = nodes[network]
    settings.CHAINWATCH_ENDPOINTS = {network: {"rpc_url": node.url}}
    settings.TOKEN_ADDRESSES = {"USDC": {network: node.token.address}}
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 0
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    settings.API_RATE_LIMITS = {"read": "100000/min", "write": "100000/min"}
    chain = Chain(network, node, api_client)
    chain.tick()  # the watcher runs before any draft exists, as in production
    return chain


@pytest.fixture(params=["Ethereum", "Base"])
def chain(request, nodes, settings, api_client) -> Chain:
    """Each network the scenario runs on (Ethereum and Base)."""
    return chain_for(request.param, nodes, settings, api_client)


@pytest.fixture
def ethereum_chain(nodes, settings, api_client) -> Chain:
    """Ethereum only, for scenarios where a second network would only double the running time."""
    return chain_for("Ethereum", nodes, settings, api_client)


def two_payers_at(api, *, currency: str, network: str, receiver: str, orders: tuple[str, str]):
    """Two pay links of one shop at one receiving address, each chosen by the same payer (as two
    customers' pages would): the payer's client, the links' tokens and the drafts (as the
    merchant's API shows them)."""
    payer = APIClient()
    tokens, drafts = [], []
    for order in orders:
        body = {
            "fiatCurrency": "USD",
            "fiatAmount": 12.34,
            "options": [{"currency": currency, "network": network, "receiverAddress": receiver}],
            "orderId": order,
        }
        link = api.post("/api/v1/payment-requests", body, format="json")
        assert link.status_code == 201, link.json()
        chosen = payer.post(
            f"/api/v1/checkout/{link.json()['token']}/select", {"currency": currency, "network": network}, format="json"
        )
        assert chosen.status_code in (200, 201), chosen.json()
        tokens.append(link.json()["token"])
        drafts.append(api.get(f"/api/v1/drafts/{chosen.json()['draftId']}").json())
    return payer, tokens, drafts


# --- What every scenario ends with --------------------------------------------------------


def events_of(draft: dict | str) -> list[str]:
    draft_id = draft if isinstance(draft, str) else draft["id"]
    return list(Event.objects.filter(draft_id=draft_id).order_by("created_at", "id").values_list("type", flat=True))


def payload(draft: dict, type_: str) -> dict:
    (event,) = Event.objects.filter(draft_id=draft["id"], type=type_)
    return event.data


def payloads(draft: dict, type_: str) -> list[dict]:
    return [e.data for e in Event.objects.filter(draft_id=draft["id"], type=type_).order_by("created_at", "id")]


def deliver_all() -> None:
    """Run the webhook dispatcher and the attempts (as beat and the worker would) until nothing is due."""
    while deliver_due():
        pass


def unmatched_events() -> list[dict]:
    return [e.data for e in Event.objects.filter(type="transfer.unmatched").order_by("created_at", "id")]


def assert_nothing_counted_twice(network: str) -> None:
    """One draft.confirmed per draft, one transfer.unmatched per account and transfer, one
    accrued fee per confirmed fee-accruing draft, a paid draft's amount made of exactly the
    transfers linked to it, and every settled transfer to a merchant's address either pays a
    draft or is reported."""
    confirmed = Counter(Event.objects.filter(type="draft.confirmed").values_list("draft_id", flat=True))
    assert all(n == 1 for n in confirmed.values()), confirmed
    reported = Counter(
        (e.user_id, e.data["txId"], e.data["outputIndex"]) for e in Event.objects.filter(type="transfer.unmatched")
    )
    assert all(n == 1 for n in reported.values()), reported
    assert len(reported) == UnmatchedTransfer.objects.count()
    drafts = Draft.objects.filter(network=network)
    for draft in drafts:
        fees = AccruedFee.objects.filter(draft=draft).count()
        accrues = draft.status == DraftStatus.CONFIRMED and draft.fee_placement == FeePlacement.ACCRUED
        assert fees == (1 if accrues else 0), (draft.id, draft.status, fees)
        assert confirmed.get(draft.id, 0) == (1 if draft.status == DraftStatus.CONFIRMED else 0)
        if draft.status in (DraftStatus.SEEN, DraftStatus.AMOUNT_MISMATCH, DraftStatus.CONFIRMED):
            linked = ObservedTransfer.objects.filter(draft=draft, orphaned=False)
            assert sorted(t.txid for t in linked) == sorted(draft.paid_tx_ids), draft.id
            assert sum(t.amount_base_units for t in linked) == draft.received_base_units, draft.id
    head = Cursor.objects.get(network=network, family="evm").head
    for transfer in ObservedTransfer.objects.filter(network=network, orphaned=False, draft__isnull=True):
        settled = transfer.block_height is not None and head - transfer.block_height + 1 >= DEFAULT_CONFIRMATIONS
        if settled:
            assert UnmatchedTransfer.objects.filter(transfer=transfer).exists(), f"{transfer} went unreported"

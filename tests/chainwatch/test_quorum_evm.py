"""Several EVM endpoints and a quorum for Confirmed, on two real anvil nodes that hold the same
chain (same genesis, the same signed transactions, blocks mined with the same timestamps), one
of them behind a small JSON-RPC proxy that lies: it invents a Transfer log, and the receipt of
a transaction that was never mined."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest
import requests
from django.test import Client
from eth_account import Account
from web3 import Web3

from chainwatch.devchain import TOKEN_ARTIFACT
from chainwatch.evm import TRANSFER_TOPIC, address_topic
from chainwatch.models import Cursor, ObservedTransfer, TransferQuorum
from chainwatch.tasks import watcher_run
from drafts.enums import DraftStatus
from notifications.emails import email_render
from notifications.kinds import WATCHERS_DISAGREE
from notifications.models import EmailNotification
from payments.enums import Currency, Network
from tests.chainwatch.conftest import ANVIL, free_port
from tests.factories import make_draft

pytestmark = pytest.mark.django_db

# anvil's first development account (its well-known key): the payer on both nodes.
PAYER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"


class TwinAnvils:
    """Two anvil nodes kept on one chain: every transaction is signed once and sent to both,
    every block mined on both with the same timestamp, so block hashes are the same. Each node
    names its `finalized` block two epochs of `slots` below its head (anvil's rule)."""

    def __init__(self, slots: tuple[int, ...] = (32, 32)) -> None:
        self.genesis = int(time.time()) - 60
        self.processes: list[subprocess.Popen] = []
        self.urls: list[str] = []
        for epoch in slots:
            port = free_port()
            self.processes.append(
                subprocess.Popen(  # noqa: S603
                    [str(ANVIL), "--host", "127.0.0.1", "--port", str(port), "--chain-id", "1", "--silent"]
                    + ["--no-mining", "--timestamp", str(self.genesis), "--slots-in-an-epoch", str(epoch)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            self.urls.append(f"http://127.0.0.1:{port}")
        self.w3s = [Web3(Web3.HTTPProvider(url)) for url in self.urls]
        deadline = time.monotonic() + 20
        while not all(self._up(w3) for w3 in self.w3s):
            if time.monotonic() > deadline:
                pytest.fail("anvil did not start")
            time.sleep(0.05)
        self.account = Account.from_key(PAYER_KEY)
        self.nonce = 0
        self.timestamp = self.genesis
        spec = json.loads(TOKEN_ARTIFACT.read_text())
        factory = self.w3s[0].eth.contract(abi=spec["abi"], bytecode=spec["bytecode"])
        created = self.send(factory.constructor("Test USDC", "USDC", 6).build_transaction(self._base()))
        self.mine()
        address = self.w3s[0].eth.get_transaction_receipt(created)["contractAddress"]
        self.token = self.w3s[0].eth.contract(address=address, abi=spec["abi"])
        self.send(self.token.functions.mint(self.account.address, 10**18).build_transaction(self._base()))
        self.mine()

    @staticmethod
    def _up(w3: Web3) -> bool:
        try:
            return w3.is_connected()
        except Exception:  # noqa: BLE001 - not up yet
            return False

    def _base(self) -> dict:
        return {"from": self.account.address, "nonce": self.nonce, "gas": 3_000_000, "chainId": 1, "gasPrice": 10**10}

    def send(self, tx: dict) -> str:
        signed = self.account.sign_transaction({**tx, "nonce": self.nonce})
        self.nonce += 1
        for w3 in self.w3s:
            w3.eth.send_raw_transaction(signed.raw_transaction)
        return signed.hash.to_0x_hex()

    def pay_token(self, to: str, amount: int) -> str:
        return self.send(self.token.functions.transfer(to, amount).build_transaction(self._base()))

    def mine(self, blocks: int = 1) -> None:
        for _ in range(blocks):
            self.timestamp = max(self.timestamp + 1, int(time.time()))
            for w3 in self.w3s:
                w3.provider.make_request("evm_mine", [self.timestamp])
        hashes = {w3.eth.get_block("latest")["hash"] for w3 in self.w3s}
        assert len(hashes) == 1, "the twin nodes' chains parted"

    def pause(self, node: int) -> None:
        os.kill(self.processes[node].pid, signal.SIGSTOP)

    def resume(self, node: int) -> None:
        os.kill(self.processes[node].pid, signal.SIGCONT)

    def stop(self) -> None:
        for process in self.processes:
            os.kill(process.pid, signal.SIGCONT)
            process.kill()
            process.wait(timeout=10)


class LyingProxy:
    """A JSON-RPC endpoint in front of an anvil node that passes everything on, and adds a
    Transfer log (eth_getLogs) and its receipt (eth_getTransactionReceipt) for a transaction
    the node never mined."""

    def __init__(self, fake_server, upstream: str) -> None:
        self.upstream = upstream
        self.invented: dict[str, dict] = {}  # txid -> receipt
        self.hidden: set[str] = set()  # real transactions it says it does not know
        self.server = fake_server(self.handle)
        self.url = self.server.url

    def invent_transfer(self, token: str, to: str, amount: int) -> str:
        """A Transfer of `amount` to `to` in the node's latest (real) block, by a transaction
        that does not exist."""
        ask = {"jsonrpc": "2.0", "id": 1, "method": "eth_getBlockByNumber", "params": ["latest", False]}
        block = requests.post(self.upstream, json=ask, timeout=30).json()["result"]
        txid = "0x" + secrets.token_hex(32)
        log = {
            "address": token,
            "topics": [TRANSFER_TOPIC, address_topic(Account.create().address), address_topic(to)],
            "data": "0x" + f"{amount:064x}",
            "blockNumber": block["number"],
            "blockHash": block["hash"],
            "transactionHash": txid,
            "transactionIndex": "0x0",
            "logIndex": "0x0",
            "removed": False,
        }
        self.invented[txid] = {
            "transactionHash": txid,
            "transactionIndex": "0x0",
            "blockHash": block["hash"],
            "blockNumber": block["number"],
            "from": Account.create().address.lower(),
            "to": token.lower(),
            "cumulativeGasUsed": "0xc350",
            "gasUsed": "0xc350",
            "effectiveGasPrice": "0x3b9aca00",
            "contractAddress": None,
            "logs": [log],
            "logsBloom": "0x" + "00" * 256,
            "status": "0x1",
            "type": "0x2",
        }
        return txid

    def _lie(self, item: dict, answer: dict) -> dict:
        if item["method"] == "eth_getTransactionReceipt" and item["params"][0] in self.hidden:
            return {**answer, "result": None}
        if item["method"] == "eth_getTransactionReceipt" and item["params"][0] in self.invented:
            return {**answer, "result": self.invented[item["params"][0]]}
        if item["method"] == "eth_getLogs" and isinstance(answer.get("result"), list):
            query = item["params"][0]
            start, end = int(query["fromBlock"], 16), int(query["toBlock"], 16)
            extra = [
                receipt["logs"][0]
                for receipt in self.invented.values()
                if start <= int(receipt["blockNumber"], 16) <= end
            ]
            return {**answer, "result": answer["result"] + extra}
        return answer

    def handle(self, method, path, body, headers):
        payload = json.loads(body)
        items = payload if isinstance(payload, list) else [payload]
        answers = requests.post(self.upstream, json=items, timeout=30).json()
        by_id = {answer["id"]: answer for answer in answers}
        out = [self._lie(item, by_id[item["id"]]) for item in items]
        return 200, out if isinstance(payload, list) else out[0]


@pytest.fixture
def twins(settings) -> Iterator[TwinAnvils]:
    nodes = TwinAnvils()
    settings.TOKEN_ADDRESSES = {"USDC": {"Ethereum": nodes.token.address}}
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 10
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    settings.CHAINWATCH_HTTP_TIMEOUT_SECONDS = 1
    settings.OPERATOR_EMAIL = "operator@example.com"
    yield nodes
    nodes.stop()


def watch() -> None:
    watcher_run(Network.ETHEREUM, "evm")


def usdc_draft(owner, amount=25_000_000, confirmations=3):
    return make_draft(
        owner,
        network=Network.ETHEREUM,
        currency=Currency.USDC,
        receiver_address=Account.create().address,
        amount_base_units=amount,
        required_confirmations=confirmations,
    )


def health() -> dict:
    return Client(REMOTE_ADDR="127.0.0.1").get("/healthz").json()


def test_a_payment_only_the_lying_endpoint_reports_stays_seen_and_the_operator_is_told(
    owner, twins, fake_server, settings
):
    liar = LyingProxy(fake_server, twins.urls[1])
    # The liar first: it is the endpoint the pass scans with, so its invented payment is Seen.
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": f"{liar.url}, {twins.urls[0]}"}}
    watch()
    draft = usdc_draft(owner)
    twins.mine()
    txid = liar.invent_transfer(twins.token.address, draft.receiver_address, 25_000_000)  # in that new block

    for _ in range(5):
        twins.mine()
        watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == txid
    assert draft.confirmations == 0  # no depth the quorum agrees on

    transfer = ObservedTransfer.objects.get(txid=txid)
    record = TransferQuorum.objects.get(transfer=transfer)
    assert record.source.startswith("#1 ")
    says = {answer["endpoint"][:2]: answer["says"] for answer in record.answers}
    assert says == {"#1": "agrees", "#2": "missing"}
    assert record.disagreeing_since is not None

    body = health()
    assert body["checks"]["watchers"].startswith("disagreement:") and txid in body["checks"]["watchers"]
    scraped = Client(REMOTE_ADDR="127.0.0.1").get("/metrics").content.decode()
    honest = record.answers[1]["endpoint"]
    assert f'chainwatch_quorum_disagreements_total{{endpoint="{honest}",network="Ethereum"}} 1.0' in scraped
    assert "watchers" in body["failed"]
    emails = EmailNotification.objects.filter(kind=WATCHERS_DISAGREE)
    assert [e.to for e in emails] == ["operator@example.com"]  # once, though every pass disagreed
    assert emails[0].context["txid"] == txid
    subject, text, html = email_render(emails[0])
    assert "Ethereum" in subject and "disagree" in subject
    assert txid in text and "#1 127.0.0.1" in text and "missing" in text and str(draft.id) in text
    assert txid in html
    assert Cursor.objects.get(network=Network.ETHEREUM, family="evm").last_error == ""


def test_a_real_payment_on_both_endpoints_confirms_as_with_one(owner, twins, fake_server, settings):
    liar = LyingProxy(fake_server, twins.urls[1])  # it lies about nothing here
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": f"{liar.url},{twins.urls[0]}"}}
    watch()
    draft = usdc_draft(owner, confirmations=3)
    tx = twins.pay_token(draft.receiver_address, 25_000_000)
    twins.mine()
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == tx and draft.confirmations == 1

    twins.mine(2)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 3
    record = TransferQuorum.objects.get(transfer__txid=tx)
    assert [answer["says"] for answer in record.answers] == ["agrees", "agrees"]
    assert record.disagreeing_since is None
    assert health()["checks"]["watchers"] == "ok"
    assert not EmailNotification.objects.filter(kind=WATCHERS_DISAGREE).exists()


@pytest.mark.slow
def test_an_endpoint_that_stops_answering_delays_confirmed_and_nothing_else(owner, twins, settings):
    """The issue asks for a 60 s stop; 6 s shows the same (the delay follows the stop's length)
    and keeps the suite short."""
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": ",".join(twins.urls)}}
    watch()
    draft = usdc_draft(owner, confirmations=3)
    tx = twins.pay_token(draft.receiver_address, 25_000_000)
    twins.mine(3)  # deep enough already

    twins.pause(0)  # the first endpoint, the one passes scan with, stops answering
    stopped = time.monotonic()
    try:
        while time.monotonic() - stopped < 6:
            watch()
            draft.refresh_from_db()
            assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == tx  # Seen through the other
            assert health()["checks"]["watchers"] == "ok"  # down is not a disagreement
    finally:
        twins.resume(0)
    resumed = time.monotonic()
    record = TransferQuorum.objects.get(transfer__txid=tx)
    assert record.source.startswith("#2 ")
    assert [answer["says"] for answer in record.answers] == ["down", "agrees"]

    while draft.status != DraftStatus.CONFIRMED and time.monotonic() - resumed < 15:
        watch()
        draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 3
    assert time.monotonic() - resumed < 15
    assert not EmailNotification.objects.filter(kind=WATCHERS_DISAGREE).exists()


def test_an_endpoint_denying_a_real_payment_delays_it_until_it_agrees(owner, twins, fake_server, settings):
    liar = LyingProxy(fake_server, twins.urls[1])
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": f"{twins.urls[0]},{liar.url}"}}
    watch()
    draft = usdc_draft(owner, confirmations=2)
    tx = twins.pay_token(draft.receiver_address, 25_000_000)
    liar.hidden.add(tx)
    twins.mine(3)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.confirmations == 0
    assert health()["checks"]["watchers"].startswith("disagreement:")
    assert EmailNotification.objects.filter(kind=WATCHERS_DISAGREE).count() == 1

    liar.hidden.clear()  # it agrees again (a provider fixed, or replaced)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 3
    assert TransferQuorum.objects.get(transfer__txid=tx).disagreeing_since is None
    assert health()["checks"]["watchers"] == "ok"


def test_a_payment_invented_by_an_endpoint_not_scanned_with_pays_nothing(owner, twins, fake_server, settings):
    liar = LyingProxy(fake_server, twins.urls[1])
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": f"{twins.urls[0]},{liar.url}"}}
    watch()
    draft = usdc_draft(owner)
    twins.mine()
    liar.invent_transfer(twins.token.address, draft.receiver_address, 25_000_000)
    for _ in range(3):
        twins.mine()
        watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING

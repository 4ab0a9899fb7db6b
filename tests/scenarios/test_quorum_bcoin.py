"""Several Bitcoin Core endpoints and a quorum for Confirmed, on two real bcoin regtest nodes
(tests/scenarios/bcoin/) connected as peers: blocks are mined on node A and reach node B by P2P.
The service's endpoints are node A through its JSON-RPC adapter (honest) and node B through a
small proxy that can lie (it adds an output paying a draft to the coinbase of a block, in its
`getblock` and `getrawtransaction` answers) or stop answering. Every assertion is made once both
nodes have the same tip."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from decimal import Decimal

import pytest
import requests
from django.test import Client
from embit import ec
from embit.networks import NETWORKS
from embit.script import p2wpkh

from chainwatch.models import Cursor, TransferQuorum
from chainwatch.tasks import chainwatch_run
from drafts.enums import DraftStatus
from notifications.kinds import WATCHERS_DISAGREE
from notifications.models import EmailNotification
from payments.enums import Currency, Method
from tests.chainwatch.conftest import fake_server  # noqa: F401 - the proxy's local server
from tests.factories import make_draft
from tests.scenarios.bcoin.node import BcoinNode

pytestmark = pytest.mark.django_db


class Nodes:
    """Node A (honest, with the paying wallet; blocks are mined here) and node B, its peer."""

    def __init__(self, a: BcoinNode, b: BcoinNode) -> None:
        self.a, self.b = a, b

    def pay(self, address: str, sats: int) -> str:
        """A payment from node A's wallet, once it has reached node B's mempool by P2P too."""
        txid = self.a.pay((address, sats))
        self.a.in_mempool(txid)
        self.b.in_mempool(txid)
        return txid

    def mine(self, blocks: int = 1) -> list[str]:
        hashes = self.a.mine(blocks)
        self.b.synced_with(self.a)
        return hashes


@pytest.fixture(scope="module")
def nodes(tmp_path_factory) -> Iterator[Nodes]:
    a = BcoinNode(tmp_path_factory.mktemp("bcoin-a"))
    try:
        b = BcoinNode(tmp_path_factory.mktemp("bcoin-b"), peer=a)
    except BaseException:
        a.stop()
        raise
    yield Nodes(a, b)
    b.stop()
    a.stop()


class CoreProxy:
    """Bitcoin Core JSON-RPC in front of `upstream`. `lie_in(block_hash, address, sats)` adds an
    output to that block's coinbase; `down` answers 503 to everything, as a stopped node's
    load balancer does."""

    def __init__(self, fake_server, upstream: str) -> None:  # noqa: F811 - the fixture's function
        self.upstream = upstream
        self.lies: dict[str, tuple[str, int]] = {}
        self.coinbases: dict[str, str] = {}  # txid -> block hash
        self.down = False
        self.server = fake_server(self.handle)
        self.url = self.server.url.replace("//", "//user:pass@")

    def lie_in(self, block_hash: str, address: str, sats: int) -> str:
        self.lies[block_hash] = (address, sats)
        block = self._post({"method": "getblock", "params": [block_hash, 1], "id": 1})["result"]
        self.coinbases[block["tx"][0]] = block_hash
        return block["tx"][0]

    def _post(self, body):
        return requests.post(self.upstream, json=body, timeout=30).json()

    def _add_output(self, tx: dict, block_hash: str) -> None:
        address, sats = self.lies[block_hash]
        # A JSON number as Core writes it: Python's shortest float text of a whole-sat value is exact.
        output = {"value": float(Decimal(sats) / 10**8), "n": len(tx["vout"]), "scriptPubKey": {"address": address}}
        tx["vout"].append(output)

    def _lie(self, call: dict, answer: dict) -> dict:
        result = answer.get("result")
        if call["method"] == "getblock" and isinstance(result, dict) and result.get("hash") in self.lies:
            if result["tx"] and isinstance(result["tx"][0], dict):
                self._add_output(result["tx"][0], result["hash"])
        if call["method"] == "getrawtransaction" and isinstance(result, dict) and result.get("txid") in self.coinbases:
            self._add_output(result, self.coinbases[result["txid"]])
        return answer

    def handle(self, method, path, body, headers):
        if self.down:
            return 503, "Service Unavailable"
        payload = json.loads(body)
        calls = payload if isinstance(payload, list) else [payload]
        answers = self._post(calls)
        out = [self._lie(call, answer) for call, answer in zip(calls, answers, strict=True)]
        return 200, out if isinstance(payload, list) else out[0]


@pytest.fixture
def proxy(fake_server, nodes: Nodes, settings) -> CoreProxy:  # noqa: F811 - the fixture
    """Node B's endpoint; the service is given it first, then node A's."""
    settings.ENABLED_NETWORKS = [*settings.ENABLED_NETWORKS, "Regtest"]
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 2
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    settings.CHAINWATCH_HTTP_TIMEOUT_SECONDS = 2
    settings.OPERATOR_EMAIL = "operator@example.com"
    proxy = CoreProxy(fake_server, nodes.b.rpc_url)
    settings.CHAINWATCH_ENDPOINTS = {"Regtest": {"bitcoin_rpc_url": f"{proxy.url},{nodes.a.rpc_url}"}}
    nodes.b.synced_with(nodes.a)
    return proxy


def new_address() -> str:
    return p2wpkh(ec.PrivateKey(secrets.token_bytes(32)).get_public_key()).address(NETWORKS["regtest"])


def btc_draft(owner, sats: int = 1_234_567, confirmations: int = 2):
    return make_draft(
        owner,
        network="Regtest",
        currency=Currency.BTC,
        method=Method.SINGLE_OUTPUT,
        receiver_address=new_address(),
        amount_base_units=sats,
        fee_base_units=0,
        required_confirmations=confirmations,
    )


def tick() -> None:
    chainwatch_run("Regtest", "bitcoin")
    cursor = Cursor.objects.get(network="Regtest", family="bitcoin")
    assert cursor.last_error == "", cursor.last_error


def health() -> dict:
    return Client(REMOTE_ADDR="127.0.0.1").get("/healthz").json()


def test_an_output_only_the_lying_endpoint_reports_stays_seen_and_the_operator_is_told(owner, nodes, proxy):
    tick()
    draft = btc_draft(owner)
    [block_hash] = nodes.mine(1)
    # Node B has the block, and its endpoint says its coinbase also pays the draft; node A does not.
    coinbase = proxy.lie_in(block_hash, draft.receiver_address, draft.amount_base_units)
    for _ in range(3):
        tick()
        nodes.mine(1)
    tick()

    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == coinbase and draft.confirmations == 0
    record = TransferQuorum.objects.get(transfer__txid=coinbase)
    assert [(a["endpoint"][:2], a["says"]) for a in record.answers] == [("#1", "agrees"), ("#2", "missing")]
    assert record.disagreeing_since is not None
    assert health()["checks"]["watchers"].startswith("disagreement:")
    assert EmailNotification.objects.filter(kind=WATCHERS_DISAGREE, to="operator@example.com").count() == 1


def test_a_real_payment_both_nodes_see_confirms(owner, nodes, proxy):
    tick()
    draft = btc_draft(owner, confirmations=2)
    txid = nodes.pay(draft.receiver_address, draft.amount_base_units)
    tick()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == txid  # from the mempool
    nodes.mine(1)
    tick()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.confirmations == 1
    nodes.mine(1)
    tick()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 2
    record = TransferQuorum.objects.get(transfer__txid=txid)
    assert [a["says"] for a in record.answers] == ["agrees", "agrees"]
    assert health()["checks"]["watchers"] == "ok"


def test_node_b_endpoint_stopped_delays_confirmed_and_nothing_else(owner, nodes, proxy):
    tick()
    draft = btc_draft(owner, confirmations=2)
    txid = nodes.pay(draft.receiver_address, draft.amount_base_units)
    nodes.mine(2)  # node B has both blocks too: only its endpoint is missing
    proxy.down = True  # node B's endpoint stops answering: passes go on with node A's
    for _ in range(3):
        tick()
        draft.refresh_from_db()
        assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == txid
        assert health()["checks"]["watchers"] == "ok"
    record = TransferQuorum.objects.get(transfer__txid=txid)
    assert [a["says"] for a in record.answers] == ["down", "agrees"] and record.source.startswith("#2 ")

    proxy.down = False  # node B's endpoint is back: the draft proceeds on the next pass
    tick()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 2
    assert [a["says"] for a in TransferQuorum.objects.get(transfer__txid=txid).answers] == ["agrees", "agrees"]
    assert not EmailNotification.objects.filter(kind=WATCHERS_DISAGREE).exists()

"""Several Bitcoin (Core and Esplora) and Solana endpoints and a quorum for Confirmed, against
local servers answering like their API docs (tests/chainwatch/fakes.py). Each endpoint is its
own server over its own copy of the chain: the honest ones hold the same blocks, the liar holds
the same blocks plus a payment the others never saw."""

from __future__ import annotations

import hashlib

import pytest
from django.test import Client
from solders.keypair import Keypair

from chainwatch.models import TransferQuorum
from chainwatch.tasks import watcher_run
from drafts.enums import DraftStatus
from notifications.kinds import WATCHERS_DISAGREE
from notifications.models import EmailNotification
from payments.enums import Currency, Network
from tests.chainwatch.fakes import FakeBitcoin, FakeSolana, FakeTx
from tests.factories import make_draft

pytestmark = pytest.mark.django_db


class Switch:
    """A local server's handler that can be made to stop answering (503, as a load balancer in
    front of a stopped node does)."""

    def __init__(self, handler) -> None:
        self.handler = handler
        self.down = False

    def __call__(self, method, path, body, headers):
        if self.down:
            return 503, "Service Unavailable"
        return self.handler(method, path, body, headers)


def health() -> dict:
    return Client(REMOTE_ADDR="127.0.0.1").get("/healthz").json()


@pytest.fixture(autouse=True)
def _operator(settings):
    settings.OPERATOR_EMAIL = "operator@example.com"
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 2


# --- Bitcoin: Core JSON-RPC and Esplora ---------------------------------------------------


@pytest.fixture(params=["core", "esplora"])
def bitcoins(request, fake_server, settings):
    """(liar, honest): two Bitcoin chains with the same blocks, each behind its own server; the
    liar's server is first in the list."""
    chains = [FakeBitcoin(), FakeBitcoin()]
    switches = []
    urls = []
    for chain in chains:
        chain.mine(5)
        switch = Switch(chain.core_handler if request.param == "core" else chain.esplora_handler)
        switches.append(switch)
        server = fake_server(switch)
        urls.append(server.url.replace("//", "//user:pass@") if request.param == "core" else server.url)
    key = "bitcoin_rpc_url" if request.param == "core" else "esplora_url"
    settings.CHAINWATCH_ENDPOINTS = {"Mainnet": {key: ",".join(urls)}}
    for chain, switch in zip(chains, switches, strict=True):
        chain.switch = switch
    return chains


def mine(chains, blocks: int = 1) -> None:
    for chain in chains:
        chain.mine(blocks)
    assert len({chain.blocks[-1][0] for chain in chains}) == 1


def btc_draft(owner, sats: int, confirmations: int = 2):
    return make_draft(
        owner,
        network=Network.MAINNET,
        currency=Currency.BTC,
        receiver_address=f"bc1qquorum{sats}",
        amount_base_units=sats,
        required_confirmations=confirmations,
    )


def watch_bitcoin() -> None:
    watcher_run(Network.MAINNET, "bitcoin")


def test_bitcoin_an_output_only_the_liar_reports_is_never_confirmed(owner, bitcoins):
    liar, honest = bitcoins
    watch_bitcoin()
    draft = btc_draft(owner, 150_000)
    txid = hashlib.sha256(b"never mined").hexdigest()
    liar.mempool[txid] = FakeTx(txid, [(draft.receiver_address, 150_000)])
    mine(bitcoins)
    for _ in range(4):
        watch_bitcoin()
        mine(bitcoins)
    watch_bitcoin()

    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == txid and draft.confirmations == 0
    record = TransferQuorum.objects.get(transfer__txid=txid)
    assert [(a["endpoint"][:2], a["says"]) for a in record.answers] == [("#1", "agrees"), ("#2", "missing")]
    assert health()["checks"]["watchers"].startswith("disagreement:")
    assert EmailNotification.objects.filter(kind=WATCHERS_DISAGREE).count() == 1


def test_bitcoin_a_real_payment_on_both_confirms_and_a_stopped_endpoint_only_delays_it(owner, bitcoins):
    liar, honest = bitcoins  # the "liar" tells the truth here
    watch_bitcoin()
    draft = btc_draft(owner, 160_000, confirmations=2)
    txids = {chain.pay((draft.receiver_address, 160_000)) for chain in bitcoins}
    assert len(txids) == 1
    mine(bitcoins, 2)
    honest.switch.down = True
    for _ in range(3):
        watch_bitcoin()
        draft.refresh_from_db()
        assert draft.status == DraftStatus.SEEN and draft.confirmations == 0
    assert health()["checks"]["watchers"] == "ok"
    honest.switch.down = False
    watch_bitcoin()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 2
    record = TransferQuorum.objects.get(transfer__txid=draft.paid_tx_id)
    assert [a["says"] for a in record.answers] == ["agrees", "agrees"]
    assert not EmailNotification.objects.filter(kind=WATCHERS_DISAGREE).exists()


def test_bitcoin_a_confirmed_payment_keeps_counting_with_the_quorum_until_it_is_final(owner, bitcoins, settings):
    settings.FINALITY_DEPTHS = {**settings.FINALITY_DEPTHS, Network.MAINNET: 5}
    watch_bitcoin()
    draft = btc_draft(owner, 170_000, confirmations=2)
    assert len({chain.pay((draft.receiver_address, 170_000)) for chain in bitcoins}) == 1
    mine(bitcoins, 2)
    watch_bitcoin()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 2 and draft.finalized_at is None
    mine(bitcoins, 2)
    watch_bitcoin()
    draft.refresh_from_db()
    assert draft.confirmations == 4 and draft.finalized_at is None  # both endpoints agree on the depth
    mine(bitcoins, 1)
    watch_bitcoin()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.confirmations == 5 and draft.finalized_at is not None


# --- Solana -------------------------------------------------------------------------------


@pytest.fixture
def clusters(fake_server, settings):
    """(liar, honest) Solana clusters, each behind its own server, the liar's first."""
    found = [FakeSolana(), FakeSolana()]
    for cluster in found:
        cluster.switch = Switch(cluster.handler)
        cluster.server = fake_server(cluster.switch)
    settings.CHAINWATCH_ENDPOINTS = {"Solana": {"rpc_url": ",".join(c.server.url for c in found)}}
    return found


def sol_draft(owner, lamports: int):
    return make_draft(
        owner,
        network=Network.SOLANA,
        currency=Currency.SOL,
        receiver_address=str(Keypair().pubkey()),
        amount_base_units=lamports,
        solana_reference=str(Keypair().pubkey()),
        required_confirmations=1,
    )


def watch_solana() -> None:
    watcher_run(Network.SOLANA, "solana")


def test_solana_a_payment_only_the_liar_reports_is_never_finalized(owner, clusters):
    liar, honest = clusters
    watch_solana()
    draft = sol_draft(owner, 2 * 10**9)
    signature = liar.pay_sol(reference=draft.solana_reference, receiver=draft.receiver_address, lamports=2 * 10**9)
    honest.slot = liar.slot
    liar.finalize(signature)
    for _ in range(3):
        watch_solana()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == signature
    record = TransferQuorum.objects.get(transfer__txid=signature)
    assert [(a["endpoint"][:2], a["says"]) for a in record.answers] == [("#1", "agrees"), ("#2", "missing")]
    assert health()["checks"]["watchers"].startswith("disagreement:")
    assert EmailNotification.objects.filter(kind=WATCHERS_DISAGREE).count() == 1


def test_solana_a_real_payment_finalized_on_both_confirms_and_a_stopped_endpoint_only_delays_it(owner, clusters):
    liar, honest = clusters
    watch_solana()
    draft = sol_draft(owner, 3 * 10**9)
    signatures = {
        c.pay_sol(reference=draft.solana_reference, receiver=draft.receiver_address, lamports=3 * 10**9)
        for c in clusters
    }
    [signature] = signatures
    watch_solana()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN

    for cluster in clusters:
        cluster.finalize(signature)
    honest.switch.down = True
    for _ in range(3):
        watch_solana()
        draft.refresh_from_db()
        assert draft.status == DraftStatus.SEEN  # finalized on one endpoint only, as far as we can tell
    assert health()["checks"]["watchers"] == "ok"
    honest.switch.down = False
    watch_solana()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert [a["final"] for a in TransferQuorum.objects.get(transfer__txid=signature).answers] == [True, True]

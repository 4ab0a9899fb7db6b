"""Receiving wallets on a real Bitcoin node: bcoin 1.0.2 on regtest (tests/scenarios/bcoin/),
watched by the service's Bitcoin Core watcher unchanged through the JSON-RPC adapter. Drafts
name a receiving wallet, the node's wallet pays their derived addresses, the watcher's beat
task takes them from the mempool to Seen and from blocks to Confirmed."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from embit import bip39
from embit.bip32 import HDKey
from embit.networks import NETWORKS

from chainwatch.models import Cursor
from chainwatch.tasks import chainwatch_run
from tests.scenarios.bcoin.node import BcoinNode
from tests.scenarios.conftest import events_of, payload

pytestmark = pytest.mark.django_db

FEE_ADDRESS = "bcrt1qv9eqw5ttwm5dcvgs4nqradsyvh2f3u0xy8el04llq06vhr2mhrmq9wcck0"
ROOT_KEY = HDKey.from_seed(bip39.mnemonic_to_seed("abandon " * 11 + "about"))
_accounts = iter(range(10, 100))


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    running = BcoinNode(tmp_path_factory.mktemp("bcoin"))
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _watched(settings, node):
    settings.ENABLED_NETWORKS = [*settings.ENABLED_NETWORKS, "Regtest"]
    settings.PLATFORM_FEE_ADDRESSES = {"Regtest": FEE_ADDRESS}
    settings.CHAINWATCH_ENDPOINTS = {"Regtest": {"bitcoin_rpc_url": node.rpc_url}}
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 2
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    settings.API_RATE_LIMITS = {"read": "100000/min", "write": "100000/min"}


def wallet(api_client) -> dict:
    """A wallet of its own per test (a BIP84 account of the test mnemonic): the chain is shared."""
    account = next(_accounts)
    tpub = ROOT_KEY.derive(f"m/84h/1h/{account}h").to_public().to_base58(version=NETWORKS["regtest"]["xpub"])
    body = {"network": "Regtest", "descriptor": f"wpkh([{ROOT_KEY.my_fingerprint.hex()}/84h/1h/{account}h]{tpub}/0/*)"}
    response = api_client.post("/api/v1/receiving-wallets", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def draft(api_client, wallet_id: str, amount: int, **body) -> dict:
    body = {"network": "Regtest", "receivingWalletId": wallet_id, "amountSats": amount, **body}
    response = api_client.post("/api/v1/drafts", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def tick() -> None:
    chainwatch_run("Regtest", "bitcoin")
    cursor = Cursor.objects.get(network="Regtest", family="bitcoin")
    assert cursor.last_error == "", cursor.last_error


def status(api_client, made: dict) -> dict:
    return api_client.get(f"/api/v1/drafts/{made['id']}/status").json()


def test_derived_addresses_paid_from_the_nodes_wallet_are_seen_then_confirmed(api_client, node):
    tick()
    shop = wallet(api_client)
    first, second = draft(api_client, shop["id"], 5_000_000), draft(api_client, shop["id"], 5_000_000)
    assert first["receiverAddress"] == shop["firstAddresses"][0]["address"]
    assert second["receiverAddress"] == shop["firstAddresses"][1]["address"]
    assert first["receiverAddress"].startswith("bcrt1q") and first["paymentMethod"] == "MultiOutput"
    assert first["amountSats"] == second["amountSats"] == 5_000_000  # the round price: no nudge
    assert first["platformFeeSats"] > 0  # a fee output in the same transaction (MultiOutput)

    txids = [
        node.pay((made["receiverAddress"], 5_000_000), (FEE_ADDRESS, made["platformFeeSats"]))
        for made in (first, second)
    ]
    tick()
    assert [status(api_client, made)["status"] for made in (first, second)] == ["Seen", "Seen"]
    node.mine(1)
    tick()
    node.mine(1)
    tick()
    for made, txid in zip((first, second), txids, strict=True):
        now = status(api_client, made)
        assert now["status"] == "Confirmed" and now["txIds"] == [txid]
        assert events_of(made) == ["draft.created", "draft.seen", "draft.confirmed"]
    shown = api_client.get(f"/api/v1/receiving-wallets/{shop['id']}").json()
    assert shown["nextIndex"] == 2 and shown["unusedAddresses"] == 0


def test_exact_short_and_over_payments_to_derived_addresses(api_client, node):
    tick()
    shop = wallet(api_client)
    exact, short, over = (draft(api_client, shop["id"], 100_000, singleOutput=True) for _ in range(3))
    node.pay((exact["receiverAddress"], 100_000))
    node.pay((short["receiverAddress"], 95_000))
    node.pay((over["receiverAddress"], 104_000))
    node.mine(2)
    tick()
    assert status(api_client, exact)["status"] == "Confirmed"
    for made, received in ((short, 95_000), (over, 104_000)):
        now = api_client.get(f"/api/v1/drafts/{made['id']}").json()
        assert now["status"] == "AmountMismatch" and now["receivedAmountSats"] == received


def test_the_tx_templates_psbt_completed_by_bitcoinjs_and_broadcast_pays_the_derived_address(api_client, node):
    """The payer's side with a real wallet library: the service's PSBT (outputs only) gets an input
    and change from bitcoinjs-lib, is signed and broadcast to the node, and the draft is paid."""
    from embit.script import p2wpkh

    tick()
    shop = wallet(api_client)
    made = draft(api_client, shop["id"], 5_000_000)
    template = api_client.get(f"/api/v1/drafts/{made['id']}/tx-template").json()
    assert template["outputs"][0]["address"] == made["receiverAddress"] == shop["firstAddresses"][0]["address"]

    payer = ROOT_KEY.derive("m/84h/1h/500h/0/0")
    payer_address = p2wpkh(payer.key.get_public_key()).address(NETWORKS["regtest"])
    funding = node.pay((payer_address, 10_000_000))
    node.mine(1)
    vout = next(
        o["n"]
        for o in node.rpc("getrawtransaction", funding, True)["vout"]
        if o["scriptPubKey"]["hex"] == p2wpkh(payer.key.get_public_key()).data.hex()
    )
    total = sum(o["amountSats"] for o in template["outputs"])
    change = 10_000_000 - total - 1_000  # 1,000 sats of network fee, the payer's choice
    argv = [template["psbt"], funding, str(vout), "10000000", payer.key.secret.hex(), payer_address, str(change)]
    completed = subprocess.run(
        ["node", str(Path(__file__).parent / "bcoin" / "complete_psbt.cjs"), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    txid = node.rpc("sendrawtransaction", completed.stdout.strip())
    for _ in range(100):  # the node takes it into its mempool a moment after answering
        if node.rpc("getrawmempool"):
            break
        time.sleep(0.1)
    assert node.rpc("getrawmempool") == [txid]
    tick()
    assert status(api_client, made)["status"] == "Seen"
    node.mine(2)
    tick()
    now = status(api_client, made)
    assert now["status"] == "Confirmed" and now["txIds"] == [txid]
    assert payload(made, "draft.confirmed")["platformFee"]["accrued"] is False  # the fee output was paid

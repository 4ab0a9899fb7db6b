"""Receiving wallets on a real Bitcoin node: bcoin 1.0.2 on regtest (tests/scenarios/bcoin/),
watched by the service's Bitcoin Core watcher unchanged through the JSON-RPC adapter. Drafts
name a receiving wallet, the node's wallet pays their derived addresses, the watcher's beat
task takes them from the mempool to Seen and from blocks to Confirmed."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils.dateparse import parse_datetime
from embit import bip39
from embit.bip32 import HDKey
from embit.networks import NETWORKS

from chainwatch.models import Cursor
from chainwatch.tasks import chainwatch_run
from notifications.models import EmailNotification
from tests.scenarios.bcoin.node import BcoinNode
from tests.scenarios.conftest import deliver_all, events_of, payload

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


def drafted(api_client, made: dict) -> dict:
    return api_client.get(f"/api/v1/drafts/{made['id']}").json()


def unmatched(api_client) -> dict[str, dict]:
    """The merchant's unmatched transfers by txid."""
    return {t["txId"]: t for t in api_client.get("/api/v1/transfers").json()["items"]}


# --- Nothing paid before it was asked (the payment-identity issue) ---------------------------


def test_a_transaction_sent_before_its_draft_was_created_pays_nothing_and_is_reported(api_client, node):
    """Two payers pay the wallet's next addresses before the drafts that get them exist: one is
    seen by a watcher pass before the draft (in the mempool, paying nothing watched then), the
    other reaches the node's mempool seconds before the draft is made. Neither pays its draft;
    both are reported to the merchant as sent before the draft."""
    tick()
    shop = wallet(api_client)
    first_address, second_address = (a["address"] for a in shop["firstAddresses"][:2])
    seen_first = node.pay((first_address, 100_000))
    node.in_mempool(seen_first)
    tick()  # the watcher inspects the mempool: nothing it watches yet
    sent_before = node.pay((second_address, 100_000))
    node.in_mempool(sent_before)
    time.sleep(4)  # the node's entry time is in whole seconds (chainwatch.bitcoin.NODE_TIME_SLACK)
    first, second = (draft(api_client, shop["id"], 100_000, singleOutput=True) for _ in range(2))
    assert (first["receiverAddress"], second["receiverAddress"]) == (first_address, second_address)

    tick()
    node.mine(2)
    tick()
    for made in (first, second):
        now = drafted(api_client, made)
        assert now["status"] == "Pending" and now["paidTxIds"] == [], now
        assert events_of(made) == ["draft.created"]
    reports = unmatched(api_client)
    for txid, made in ((seen_first, first), (sent_before, second)):
        assert reports[txid]["candidateDraftIds"] == [made["id"]]
        assert reports[txid]["reason"] == "sentBeforeDraft" and reports[txid]["matched"] is False

    paid_after = node.pay((second_address, 100_000))  # the payer pays again, now that it was asked
    node.mine(2)
    tick()
    now = drafted(api_client, second)
    assert now["status"] == "Confirmed" and now["paidTxIds"] == [paid_after]


def test_a_coinbase_output_paying_a_draft_confirms_it_only_at_maturity(api_client, node):
    tick()
    node.mine(1)  # an empty mempool: the next coinbase is the block reward alone
    tick()
    assert node.rpc("getrawmempool") == []
    shop = wallet(api_client)
    height = node.rpc("getblockcount") + 1
    reward = 50 * 10**8 >> (height // 150)  # regtest halves every 150 blocks
    made = draft(api_client, shop["id"], reward, singleOutput=True)

    node.mine_to(made["receiverAddress"], 1)
    node.mine(1)
    tick()
    now = drafted(api_client, made)
    assert now["status"] == "Seen" and now["confirmations"] == 2
    assert now["requiredConfirmations"] == 100  # spendable only after 100 blocks
    node.mine(97)
    tick()
    assert drafted(api_client, made)["status"] == "Seen"
    node.mine(1)
    tick()
    now = drafted(api_client, made)
    assert now["status"] == "Confirmed" and now["confirmations"] == 100 and now["finalizedAt"] is not None
    assert events_of(made) == ["draft.created", "draft.seen", "draft.confirmed"]


# --- Confirmed stays true or says otherwise ---------------------------------------------------


def test_confirmations_keep_counting_after_confirmed_until_the_finality_depth(api_client, node, settings):
    settings.FINALITY_DEPTHS = {**settings.FINALITY_DEPTHS, "Regtest": 6}
    tick()
    shop = wallet(api_client)
    made = draft(api_client, shop["id"], 100_000, singleOutput=True)
    txid = node.pay((made["receiverAddress"], 60_000), (made["receiverAddress"], 40_000))  # two outputs, one tx
    node.mine(2)
    tick()
    now = drafted(api_client, made)
    assert now["status"] == "Confirmed" and now["confirmations"] == 2 and now["finalizedAt"] is None
    assert now["paidTxIds"] == [txid] and status(api_client, made)["txIds"] == [txid]  # one txid, listed once
    node.mine(3)
    tick()
    assert drafted(api_client, made)["confirmations"] == 5
    node.mine(1)
    tick()
    now = drafted(api_client, made)
    assert now["confirmations"] == 6 and now["finalizedAt"] is not None and now["paymentReverted"] is False
    node.mine(2)
    tick()
    assert drafted(api_client, made)["confirmations"] == 6  # final: no longer followed
    assert events_of(made) == ["draft.created", "draft.seen", "draft.confirmed"]


def test_a_reorg_deeper_than_the_required_confirmations_reverts_a_confirmed_draft_and_says_so(
    api_client, node, make_receiver, settings
):
    """invalidateblock on the block holding the payment, then a longer fork without it (bcoin's
    mempool takes nothing back from a disconnected block when it is empty, so the payment is gone)."""
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    everything = make_receiver()
    assert api_client.post("/api/v1/webhooks", {"url": everything.url}, format="json").status_code == 200
    tick()
    shop = wallet(api_client)
    made = draft(api_client, shop["id"], 100_000, singleOutput=True)
    txid = node.pay((made["receiverAddress"], 100_000))
    node.in_mempool(txid)
    tick()
    first_block, _ = node.mine(2)
    tick()
    assert drafted(api_client, made)["status"] == "Confirmed"
    assert node.rpc("getrawmempool") == []

    node.rpc("invalidateblock", first_block)
    node.mine(3)  # a longer fork without the payment: 2 confirmations undone, 2 required
    tick()
    now = drafted(api_client, made)
    assert now["status"] == "Pending" and now["paidTxIds"] == [] and now["confirmations"] == 0
    assert now["paymentReverted"] is True and now["revertedTxIds"] == [txid] and now["paymentRevertedAt"]
    assert events_of(made) == ["draft.created", "draft.seen", "draft.confirmed", "draft.payment_reverted"]
    reverted = payload(made, "draft.payment_reverted")
    assert reverted["previousStatus"] == "Confirmed" and reverted["revertedTxIds"] == [txid]
    deliver_all()
    delivered = [json.loads(r.body)["event"] for r in everything.requests]
    assert delivered[-1] == "draft.payment_reverted"  # every endpoint gets it by default
    emails = EmailNotification.objects.filter(context__event="draft.payment_reverted")
    (email,) = emails.filter(context__data__draftId=made["id"])
    assert email.user.email

    again = node.pay((made["receiverAddress"], 100_000))  # the payer pays anew
    node.mine(2)
    tick()
    now = drafted(api_client, made)
    assert now["status"] == "Confirmed" and now["paidTxIds"] == [again] and now["paymentReverted"] is False


# --- The other payment shapes on derived addresses (the Bitcoin issue) ------------------------


def test_a_split_payment_to_a_derived_address_confirms_with_both_transactions(api_client, node):
    tick()
    shop = wallet(api_client)
    made = draft(api_client, shop["id"], 100_000, singleOutput=True)
    first = node.pay((made["receiverAddress"], 60_000))
    node.in_mempool(first)
    tick()
    assert drafted(api_client, made)["status"] == "Pending"  # a part pays nothing alone
    second = node.pay((made["receiverAddress"], 40_000))
    node.mine(2)
    tick()
    now = drafted(api_client, made)
    assert now["status"] == "Confirmed" and sorted(now["paidTxIds"]) == sorted([first, second])
    assert now["receivedAmountSats"] == 100_000
    assert events_of(made) == ["draft.created", "draft.seen", "draft.confirmed"]
    assert first not in unmatched(api_client) and second not in unmatched(api_client)


def test_a_derived_address_paid_twice_reports_the_second_payment_on_its_draft(api_client, node):
    tick()
    shop = wallet(api_client)
    made, other = (draft(api_client, shop["id"], 100_000, singleOutput=True) for _ in range(2))
    paid = node.pay((made["receiverAddress"], 100_000))
    node.mine(2)
    tick()
    again = node.pay((made["receiverAddress"], 100_000))
    node.mine(2)
    tick()
    now = drafted(api_client, made)
    assert now["status"] == "Confirmed" and now["paidTxIds"] == [paid]
    assert drafted(api_client, other)["status"] == "Pending"  # the same price elsewhere: untouched
    assert events_of(made) == ["draft.created", "draft.seen", "draft.confirmed", "draft.paid_again"]
    assert payload(made, "draft.paid_again")["again"]["txId"] == again
    report = unmatched(api_client)[again]
    assert report["candidateDraftIds"] == [made["id"]] and report["matched"] is False


def test_a_late_payment_to_an_expired_drafts_derived_address_pays_it_late(api_client, node):
    from drafts.services import draft_expire

    tick()
    shop = wallet(api_client)
    made = draft(api_client, shop["id"], 100_000, singleOutput=True)
    draft_expire(draft_id=made["id"], now=parse_datetime(made["expiresAt"]) + timedelta(seconds=1))
    assert drafted(api_client, made)["status"] == "Expired"
    txid = node.pay((made["receiverAddress"], 100_000))
    node.mine(2)
    tick()
    now = drafted(api_client, made)
    assert now["status"] == "Confirmed" and now["paidLate"] is True and now["paidTxIds"] == [txid]
    assert events_of(made) == ["draft.created", "draft.expired", "draft.seen", "draft.confirmed"]


def test_a_reorg_before_confirmed_sends_a_derived_address_draft_back_to_pending(api_client, node):
    tick()
    shop = wallet(api_client)
    made = draft(api_client, shop["id"], 100_000, singleOutput=True)
    txid = node.pay((made["receiverAddress"], 100_000))
    (block,) = node.mine(1)
    tick()
    now = drafted(api_client, made)
    assert (now["status"], now["confirmations"]) == ("Seen", 1)

    assert node.rpc("getrawmempool") == []  # so bcoin takes nothing back from the block it drops
    node.rpc("invalidateblock", block)
    node.mine(2)  # a longer branch without the payment
    tick()
    now = drafted(api_client, made)
    assert now["status"] == "Pending" and now["paidTxIds"] == [] and now["paymentReverted"] is True
    assert now["revertedTxIds"] == [txid]
    assert events_of(made) == ["draft.created", "draft.seen", "draft.payment_reverted"]
    assert payload(made, "draft.payment_reverted")["previousStatus"] == "Seen"

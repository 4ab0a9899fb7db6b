"""Receiving wallets: a merchant's public descriptor, a fresh address per draft, never reused.

The vectors are BIP84's test mnemonic ("abandon" x11 "about"), testnet account m/84'/1'/0'
(fingerprint 73c5da0a): its receive addresses 0 and 1 are published and checked here as given.
"""

from __future__ import annotations

import logging

import pytest
from django.db import connection
from embit import bip39
from embit.bip32 import HDKey
from embit.networks import NETWORKS as EMBIT

from drafts.models import Draft
from tests.concurrency import run_at_once
from wallets.models import ReceivingWallet

pytestmark = pytest.mark.django_db

TPUB = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"
WPKH = f"wpkh([73c5da0a/84h/1h/0h]{TPUB}/0/*)"
TESTNET_0, TESTNET_1 = "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl", "tb1qd7spv5q28348xl4myc8zmh983w5jx32cjhkn97"
REGTEST_0, REGTEST_1 = "bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk", "bcrt1qd7spv5q28348xl4myc8zmh983w5jx32cs707jh"

ROOT = HDKey.from_seed(bip39.mnemonic_to_seed("abandon " * 11 + "about"))
ACCOUNT_PRV = ROOT.derive("m/84h/1h/0h").to_base58()  # tprv...
MAIN_PRV = ROOT.derive("m/84h/0h/0h").to_base58(version=EMBIT["main"]["xprv"])  # xprv...
WIF = ROOT.derive("m/84h/1h/0h/0/0").key.wif(EMBIT["test"])


@pytest.fixture(autouse=True)
def _developer_networks(settings):
    settings.ENABLED_NETWORKS = [*settings.ENABLED_NETWORKS, "Regtest", "Signet"]


def register(client, descriptor=WPKH, network="Testnet", **extra):
    return client.post(
        "/api/v1/receiving-wallets", {"network": network, "descriptor": descriptor, **extra}, format="json"
    )


def draft(client, wallet_id, network="Testnet", **extra):
    body = {"network": network, "receivingWalletId": wallet_id, "amountSats": 25_000, **extra}
    return client.post("/api/v1/drafts", body, format="json")


def test_the_bip84_vector_gives_consecutive_drafts_its_published_addresses_on_testnet_and_regtest(api_client):
    for network, (first, second) in {"Testnet": (TESTNET_0, TESTNET_1), "Regtest": (REGTEST_0, REGTEST_1)}.items():
        wallet = register(api_client, network=network)
        assert wallet.status_code == 200, wallet.json()
        shown = wallet.json()["firstAddresses"]
        assert [a["address"] for a in shown[:2]] == [first, second] and len(shown) == 5
        one, two = draft(api_client, wallet.json()["id"], network), draft(api_client, wallet.json()["id"], network)
        assert one.status_code == two.status_code == 201, (one.json(), two.json())
        assert (one.json()["receiverAddress"], two.json()["receiverAddress"]) == (first, second)
        assert (one.json()["addressIndex"], two.json()["addressIndex"]) == (0, 1)
        assert one.json()["receivingWalletId"] == wallet.json()["id"]
        again = api_client.get(f"/api/v1/receiving-wallets/{wallet.json()['id']}").json()
        assert again["nextIndex"] == 2 and again["unusedAddresses"] == 2


def test_a_checksum_is_checked_when_given_and_a_wrong_one_is_refused(api_client):
    from embit.descriptor.checksum import add_checksum

    good = register(api_client, add_checksum(WPKH))
    assert good.status_code == 200
    assert good.json()["descriptor"] == add_checksum(WPKH)
    ReceivingWallet.objects.all().delete()
    bad = register(api_client, add_checksum(WPKH)[:-1] + "q")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_descriptor"
    assert bad.json()["field"] == "descriptor" if "field" in bad.json() else True


def test_multipath_and_bare_keys_give_the_same_receive_addresses(api_client):
    multipath = register(api_client, WPKH.replace("/0/*", "/<0;1>/*"), network="Regtest")
    bare = register(api_client, TPUB, network="Signet", scriptType="wpkh")
    assert multipath.json()["firstAddresses"][0]["address"] == REGTEST_0
    assert bare.json()["firstAddresses"][0]["address"] == TESTNET_0  # signet shares testnet's tb1
    untyped = register(api_client, TPUB, network="Testnet")
    assert untyped.status_code == 400 and untyped.json()["code"] == "required"


def test_a_descriptor_of_another_network_is_refused(api_client):
    main_xpub = ROOT.derive("m/84h/0h/0h").to_public().to_base58(version=EMBIT["main"]["xpub"])
    on_testnet = register(api_client, f"wpkh({main_xpub}/0/*)")
    on_mainnet = register(api_client, WPKH, network="Mainnet")
    assert on_testnet.status_code == on_mainnet.status_code == 400
    assert on_testnet.json()["code"] == on_mainnet.json()["code"] == "network_mismatch"


def test_the_same_wallet_cannot_be_registered_twice(api_client):
    first = register(api_client)
    second = register(api_client, WPKH.replace("84h", "84'"))
    assert second.status_code == 409 and second.json()["code"] == "wallet_exists"
    assert second.json()["walletId"] == first.json()["id"]


def test_a_test_key_registers_only_test_network_wallets_and_sees_only_its_mode(api_client, make_key):
    from rest_framework.test import APIClient

    test_client = APIClient()
    test_client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(livemode=False)}")
    main_xpub = ROOT.derive("m/84h/0h/0h").to_public().to_base58(version=EMBIT["main"]["xpub"])
    refused = register(test_client, f"wpkh({main_xpub}/0/*)", network="Mainnet")
    assert refused.status_code == 400 and refused.json()["code"] == "live_network_in_test_mode"
    made = register(test_client)
    assert made.status_code == 200
    assert api_client.get("/api/v1/receiving-wallets").json()["total"] == 0
    assert api_client.get(f"/api/v1/receiving-wallets/{made.json()['id']}").status_code == 404
    assert test_client.get("/api/v1/receiving-wallets").json()["total"] == 1


def test_scopes_wallets_read_and_write(client_with_scopes):
    reader = client_with_scopes("wallets:read")
    assert reader.get("/api/v1/receiving-wallets").status_code == 200
    assert register(reader).status_code == 403
    writer = client_with_scopes("wallets:write", "wallets:read")
    assert register(writer).status_code == 200


def test_an_archived_wallet_gives_no_more_addresses_and_its_drafts_keep_theirs(api_client):
    wallet = register(api_client).json()
    made = draft(api_client, wallet["id"]).json()
    archived = api_client.delete(f"/api/v1/receiving-wallets/{wallet['id']}")
    assert archived.status_code == 200 and archived.json()["archived"] is True
    refused = draft(api_client, wallet["id"])
    assert refused.status_code == 409 and refused.json()["code"] == "wallet_archived"
    assert Draft.objects.get(pk=made["id"]).receiver_address == TESTNET_0
    assert api_client.get("/api/v1/receiving-wallets").json()["total"] == 0
    assert api_client.get("/api/v1/receiving-wallets?includeArchived=true").json()["total"] == 1


def test_a_wallet_draft_refuses_another_network_and_a_receiver_address_too(api_client):
    wallet = register(api_client).json()
    other = draft(api_client, wallet["id"], network="Regtest")
    assert other.status_code == 400 and other.json()["code"] == "network_mismatch"
    both = draft(api_client, wallet["id"], receiverAddress=TESTNET_1)
    assert both.status_code == 400
    lightning = draft(api_client, wallet["id"], paymentMethod="Lightning", amountSats=1000)
    assert lightning.status_code == 400 and lightning.json()["code"] == "conflicting_method"
    assert ReceivingWallet.objects.get(pk=wallet["id"]).next_index == 0


def test_the_amount_is_billed_as_asked_without_a_uniqueness_nudge(api_client):
    wallet = register(api_client).json()
    one = draft(api_client, wallet["id"], amountSats=None, fiatCurrency="USD", fiatAmount=20)
    two = draft(api_client, wallet["id"], amountSats=None, fiatCurrency="USD", fiatAmount=20)
    assert one.status_code == two.status_code == 201, (one.json(), two.json())
    assert one.json()["amountSats"] == two.json()["amountSats"]
    assert Draft.objects.get(pk=two.json()["id"]).quote_nudge_base_units == 0
    assert one.json()["receiverAddress"] != two.json()["receiverAddress"]


def test_the_gap_limit_refuses_a_draft_naming_the_wallet_until_one_is_paid(api_client, settings):
    settings.RECEIVING_WALLET_GAP_LIMIT = 3
    wallet = register(api_client).json()
    made = [draft(api_client, wallet["id"]).json() for _ in range(3)]
    refused = draft(api_client, wallet["id"])
    assert refused.status_code == 409 and refused.json()["code"] == "gap_limit_reached"
    assert refused.json()["walletId"] == wallet["id"] and wallet["id"] in refused.json()["detail"]
    assert refused.json()["unusedAddresses"] == 3 and refused.json()["gapLimit"] == 3
    Draft.objects.filter(pk=made[1]["id"]).update(paid_tx_id="ab" * 32)  # index 1 paid: 1 outstanding after it
    shown = api_client.get(f"/api/v1/receiving-wallets/{wallet['id']}").json()
    assert shown["unusedAddresses"] == 1 and shown["nextIndex"] == 3
    assert draft(api_client, wallet["id"]).json()["addressIndex"] == 3


@pytest.mark.django_db(transaction=True)
def test_concurrent_creations_get_distinct_addresses(make_key, owner):
    from rest_framework.test import APIClient

    key = make_key()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    wallet = register(client).json()

    def send():
        one = APIClient()
        one.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        return draft(one, wallet["id"])

    results = run_at_once(6, send)
    assert [r.status_code for r in results] == [201] * 6, [r.json() for r in results]
    addresses = sorted(r.json()["addressIndex"] for r in results)
    assert addresses == [0, 1, 2, 3, 4, 5]
    assert len({r.json()["receiverAddress"] for r in results}) == 6
    assert ReceivingWallet.objects.get(pk=wallet["id"]).next_index == 6


PRIVATE = {
    "tprv descriptor": lambda: f"wpkh([73c5da0a/84h/1h/0h]{ACCOUNT_PRV}/0/*)",
    "bare tprv": lambda: ACCOUNT_PRV,
    "xprv": lambda: MAIN_PRV,
    "wif descriptor": lambda: f"wpkh({WIF})",
}


@pytest.mark.parametrize("case", PRIVATE)
@pytest.mark.parametrize("where", ["descriptor", "label", "network", "scriptType", "extra"])
def test_a_private_key_anywhere_is_refused_and_never_stored_logged_or_echoed(api_client, caplog, case, where):
    secret = PRIVATE[case]()
    body = {"network": "Testnet", "descriptor": WPKH, where: secret}
    caplog.set_level(logging.DEBUG)
    response = api_client.post("/api/v1/receiving-wallets", body, format="json", HTTP_IDEMPOTENCY_KEY="k-" + where)
    assert response.status_code == 400
    assert response.json()["code"] == "private_key_refused"
    assert secret not in response.content.decode()
    assert secret not in caplog.text
    assert not ReceivingWallet.objects.exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
        for (table,) in cursor.fetchall():
            cursor.execute(f'SELECT count(*) FROM "{table}" WHERE "{table}"::text LIKE %s', [f"%{secret[:40]}%"])
            assert cursor.fetchone()[0] == 0, table

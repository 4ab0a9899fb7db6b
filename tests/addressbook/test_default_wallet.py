"""An address-book entry may stand for a receiving wallet: as the network's default, drafts,
pay-link options and recurring runs that name no receiver get the wallet's next address each."""

from __future__ import annotations

import pytest

from tests.drafts.test_receiving_wallets import TESTNET_0, TESTNET_1, register
from tests.paylinks.conftest import link_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/address-book"


def default_wallet_entry(api_client, wallet_id: str, **overrides):
    body = {"label": "Shop wallet", "network": "Testnet", "direction": "Receiving", "receivingWalletId": wallet_id}
    return api_client.post(URL, body | {"isDefault": True} | overrides, format="json")


def test_a_wallet_as_the_default_gives_each_draft_without_a_receiver_its_next_address(api_client):
    wallet = register(api_client).json()
    entry = default_wallet_entry(api_client, wallet["id"])
    assert entry.status_code == 200, entry.json()
    assert entry.json()["receivingWalletId"] == wallet["id"]
    assert entry.json()["address"] == TESTNET_0 and entry.json()["isDefault"] is True

    body = {"network": "Testnet", "amountSats": 25_000}
    first, second = (api_client.post("/api/v1/drafts", body, format="json") for _ in range(2))
    assert [first.status_code, second.status_code] == [201, 201], first.json()
    assert [first.json()["receiverAddress"], second.json()["receiverAddress"]] == [TESTNET_0, TESTNET_1]

    options = [{"currency": "BTC", "network": "Testnet"}]
    link = api_client.post("/api/v1/payment-requests", link_body(options=options), format="json")
    assert link.status_code == 201, link.json()
    assert link.json()["options"][0]["receivingWalletId"] == wallet["id"]
    assert link.json()["options"][0]["receiverAddress"] is None


def test_a_wallet_entry_is_not_paid_at_its_first_address_when_named_by_id(api_client):
    wallet = register(api_client).json()
    entry = default_wallet_entry(api_client, wallet["id"], isDefault=False).json()
    refused = api_client.post(
        "/api/v1/drafts", {"network": "Testnet", "amountSats": 25_000, "addressBookId": entry["id"]}, format="json"
    )
    assert refused.status_code == 400
    assert refused.json()["code"] == "entry_is_a_wallet"
    assert refused.json()["receivingWalletId"] == wallet["id"]


def test_a_wallet_entry_is_checked(api_client, settings):
    settings.ENABLED_NETWORKS = [*settings.ENABLED_NETWORKS, "Regtest"]
    wallet = register(api_client).json()
    wrong_network = default_wallet_entry(api_client, wallet["id"], network="Regtest")
    assert wrong_network.status_code == 400 and wrong_network.json()["errors"][0]["field"] == "receivingWalletId"
    sending = default_wallet_entry(api_client, wallet["id"], direction="Sending", isDefault=False)
    assert sending.status_code == 400 and sending.json()["errors"][0]["field"] == "direction"
    both = default_wallet_entry(api_client, wallet["id"], address=TESTNET_0)
    assert both.status_code == 400 and both.json()["errors"][0]["field"] == "receivingWalletId"
    neither = api_client.post(URL, {"network": "Testnet", "direction": "Receiving"}, format="json")
    assert neither.status_code == 400 and neither.json()["errors"][0]["field"] == "address"

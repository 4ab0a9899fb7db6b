"""Pay-link options paid at the merchant's receiving wallet: every draft made from the option
gets the wallet's next address, never one another draft had; the payer sees nothing of the wallet."""

from __future__ import annotations

import pytest

from drafts.models import Draft
from tests.drafts.conftest import ADDRESSES
from tests.drafts.test_receiving_wallets import REGTEST_0, TESTNET_0, TESTNET_1, register
from tests.paylinks.conftest import link_body

pytestmark = pytest.mark.django_db


def wallet_link(api_client, wallet_id: str, **overrides) -> dict:
    options = [
        {"currency": "BTC", "network": "Testnet", "receivingWalletId": wallet_id},
        {"currency": "USDC", "network": "Ethereum", "receiverAddress": ADDRESSES["Ethereum"]},
    ]
    response = api_client.post("/api/v1/payment-requests", link_body(options=options, **overrides), format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def test_each_draft_of_a_wallet_option_gets_the_wallets_next_address(api_client, select):
    wallet = register(api_client).json()
    link = wallet_link(api_client, wallet["id"])
    assert link["options"][0] == {
        "currency": "BTC",
        "network": "Testnet",
        "receiverAddress": None,
        "receivingWalletId": wallet["id"],
    }
    assert "receivingWalletId" not in link["options"][1]  # an address option keeps its shape

    first = select(link["token"], currency="BTC", network="Testnet")
    assert first.status_code == 200, first.json()
    assert first.json()["receiverAddress"] == TESTNET_0
    assert select(link["token"], currency="BTC", network="Testnet").json()["draftId"] == first.json()["draftId"]

    assert select(link["token"]).status_code == 200  # the payer switches to USDC: the BTC draft is cancelled
    again = select(link["token"], currency="BTC", network="Testnet")
    assert again.status_code == 200, again.json()
    assert again.json()["draftId"] != first.json()["draftId"]
    assert again.json()["receiverAddress"] == TESTNET_1  # a new draft: a new address, 0 is not handed out again

    other = select(wallet_link(api_client, wallet["id"], orderId="order-2")["token"], currency="BTC", network="Testnet")
    drafts = Draft.objects.filter(receiving_wallet_id=wallet["id"]).order_by("derivation_index")
    assert [d.derivation_index for d in drafts] == [0, 1, 2]
    assert other.json()["receiverAddress"] == drafts[2].receiver_address not in (TESTNET_0, TESTNET_1)
    assert api_client.get(f"/api/v1/receiving-wallets/{wallet['id']}").json()["nextIndex"] == 3


def test_a_wallet_option_is_checked_when_the_link_is_made(api_client, settings):
    settings.ENABLED_NETWORKS = [*settings.ENABLED_NETWORKS, "Regtest"]
    regtest = register(api_client, network="Regtest").json()
    assert regtest["firstAddresses"][0]["address"] == REGTEST_0
    testnet = register(api_client).json()

    def create(option):
        return api_client.post("/api/v1/payment-requests", link_body(options=[option]), format="json")

    wrong_network = create({"currency": "BTC", "network": "Testnet", "receivingWalletId": regtest["id"]})
    assert wrong_network.status_code == 400
    assert wrong_network.json()["code"] == "network_mismatch"
    assert wrong_network.json()["errors"][0]["field"] == "options[0].receivingWalletId"

    both = create(
        {"currency": "BTC", "network": "Testnet", "receivingWalletId": testnet["id"], "receiverAddress": TESTNET_0}
    )
    assert both.status_code == 400 and both.json()["errors"][0]["field"] == "options[0].receivingWalletId"

    unknown = create(
        {"currency": "BTC", "network": "Testnet", "receivingWalletId": "00000000-0000-4000-8000-000000000000"}
    )
    assert unknown.status_code == 400 and unknown.json()["code"] == "unknown_wallet"

    api_client.delete(f"/api/v1/receiving-wallets/{testnet['id']}")
    archived = create({"currency": "BTC", "network": "Testnet", "receivingWalletId": testnet["id"]})
    assert archived.status_code == 409 and archived.json()["code"] == "wallet_archived"


def test_a_payer_is_told_the_option_is_unavailable_when_the_wallets_gap_is_full(api_client, select, settings):
    settings.RECEIVING_WALLET_GAP_LIMIT = 1
    wallet = register(api_client).json()
    link = wallet_link(api_client, wallet["id"])
    assert select(link["token"], currency="BTC", network="Testnet").status_code == 200
    select(link["token"])  # switched away; the address handed out stays unpaid

    refused = select(link["token"], currency="BTC", network="Testnet")
    assert refused.status_code == 409
    assert refused.json()["code"] == "payment_request_unavailable"
    assert wallet["id"] not in refused.content.decode() and "gap" not in refused.content.decode().lower()
    assert api_client.get(f"/api/v1/receiving-wallets/{wallet['id']}").json()["nextIndex"] == 1


def test_one_link_takes_only_a_few_of_the_wallets_addresses_however_often_a_payer_switches(
    api_client, select, settings
):
    settings.PAYLINKS_WALLET_ADDRESSES_PER_LINK = 2
    wallet = register(api_client).json()
    link = wallet_link(api_client, wallet["id"])
    for _ in range(2):
        assert select(link["token"], currency="BTC", network="Testnet").status_code == 200
        assert select(link["token"]).status_code == 200  # switched away: that BTC draft is cancelled

    refused = select(link["token"], currency="BTC", network="Testnet")
    assert refused.status_code == 409 and refused.json()["code"] == "payment_request_unavailable"
    assert api_client.get(f"/api/v1/receiving-wallets/{wallet['id']}").json()["nextIndex"] == 2
    other = select(wallet_link(api_client, wallet["id"], orderId="order-2")["token"], currency="BTC", network="Testnet")
    assert other.status_code == 200, other.json()  # another link has addresses of its own to take
    assert api_client.get(f"/api/v1/receiving-wallets/{wallet['id']}").json()["nextIndex"] == 3

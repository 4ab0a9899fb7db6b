"""A default receiving address per network: set from the address book (checked for its
network, Receiving entries only, one per network), and used by drafts, pay links and
recurring templates that name no address."""

import pytest
from django.test import override_settings

from addressbook.models import AddressBookEntry
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES

pytestmark = pytest.mark.django_db

URL = "/api/v1/address-book"


@pytest.fixture(autouse=True)
def _fee_addresses():
    with override_settings(PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES):
        yield


def add(client, **overrides):
    body = {"label": "Till", "address": ADDRESSES["Base"], "network": "Base", "direction": "Receiving"}
    return client.post(URL, body | overrides, format="json")


def test_an_entry_marked_default_replaces_the_previous_default_of_its_network_only(api_client):
    first = add(api_client, isDefault=True).json()
    other_network = add(api_client, network="Ethereum", address=ADDRESSES["Ethereum"], isDefault=True).json()
    second = add(api_client, address="0x" + "1" * 40, isDefault=True)

    assert second.status_code == 200, second.json()
    assert first["isDefault"] and second.json()["isDefault"]
    defaults = AddressBookEntry.objects.filter(is_default=True)
    assert sorted(defaults.values_list("network", "address")) == [
        ("Base", second.json()["address"]),
        ("Ethereum", other_network["address"]),
    ]
    assert api_client.get(f"{URL}/{first['id']}").json()["isDefault"] is False


def test_a_sending_address_cannot_be_the_default_and_nothing_is_written(api_client):
    response = add(api_client, direction="Sending", isDefault=True)

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "isDefault"
    assert not AddressBookEntry.objects.exists()


def test_a_draft_without_an_address_is_paid_to_the_default_of_its_network(api_client):
    body = {"network": "Base", "currency": "USDC", "amountSats": 5_000_000}
    refused = api_client.post("/api/v1/drafts", body, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "receiverAddress"
    assert "default receiving address" in refused.json()["errors"][0]["message"]

    add(api_client, network="Ethereum", address=ADDRESSES["Ethereum"], isDefault=True)
    add(api_client, isDefault=True)
    response = api_client.post("/api/v1/drafts", body, format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["receiverAddress"] == ADDRESSES["Base"]
    given = api_client.post("/api/v1/drafts", body | {"receiverAddress": "0x" + "2" * 40}, format="json")
    assert given.json()["receiverAddress"].lower() == "0x" + "2" * 40  # an address given wins


def test_a_pay_link_option_without_an_address_takes_the_default_of_its_network(api_client):
    link = {"fiatCurrency": "EUR", "fiatAmount": 25, "options": [{"currency": "USDC", "network": "Base"}]}
    refused = api_client.post("/api/v1/payment-requests", link, format="json")
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"] == "options[0].receiverAddress"

    add(api_client, isDefault=True)
    response = api_client.post("/api/v1/payment-requests", link, format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["options"][0]["receiverAddress"] == ADDRESSES["Base"]

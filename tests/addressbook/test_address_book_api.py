"""/api/v1/address-book: per-network checks, one entry per (account, network, address),
and drafts that name an entry instead of an address."""

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from addressbook.models import AddressBookEntry
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES

pytestmark = pytest.mark.django_db

URL = "/api/v1/address-book"
EVM_LOWER = ADDRESSES["Ethereum"].lower()


def entry_body(**overrides):
    body = {"label": "Shop wallet", "address": ADDRESSES["Ethereum"], "network": "Ethereum", "direction": "Receiving"}
    return body | overrides


def add(client, **overrides):
    return client.post(URL, entry_body(**overrides), format="json")


def test_an_entry_is_added_with_its_normalised_address_and_listed_in_a_paged_envelope(api_client):
    response = add(api_client, address=EVM_LOWER, verified=True)

    assert response.status_code == 200, response.json()
    entry = response.json()
    assert entry["address"] == ADDRESSES["Ethereum"]  # EIP-55 form
    assert (entry["label"], entry["network"], entry["direction"], entry["verified"]) == (
        "Shop wallet",
        "Ethereum",
        "Receiving",
        True,
    )
    assert entry["createdAt"].endswith("Z")
    listing = api_client.get(URL).json()
    assert listing == {"items": [entry], "page": 1, "pageSize": 20, "total": 1, "next": None}


def test_the_list_filters_by_network_and_direction(api_client):
    add(api_client)
    add(api_client, network="Testnet", address=ADDRESSES["Testnet"], direction="Sending")

    sending = api_client.get(URL, {"direction": "Sending"}).json()
    assert [e["network"] for e in sending["items"]] == ["Testnet"]
    assert api_client.get(URL, {"network": "Ethereum"}).json()["total"] == 1


@pytest.mark.parametrize(
    ("network", "address"),
    [
        ("Mainnet", ADDRESSES["Testnet"]),  # a testnet address on mainnet
        ("Ethereum", "0x52908400098527886E0F7030069857D2E4169Ee7"),  # broken EIP-55 checksum
        ("Solana", "not-base58-0OIl"),
    ],
)
def test_an_address_that_fails_the_networks_rules_is_refused_naming_the_field(api_client, network, address):
    response = add(api_client, network=network, address=address)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "invalid_address"
    assert [e["field"] for e in response.json()["errors"]] == ["address"]
    assert not AddressBookEntry.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"direction": "Sideways"}, "direction"),
        ({"network": "Dogecoin"}, "network"),
        ({"address": None}, "address"),
        ({"label": "x" * 201}, "label"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_input_is_a_problem_naming_the_field(api_client, body, field):
    response = add(api_client, **body)

    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]


def test_the_same_address_twice_on_one_network_is_a_conflict_even_written_differently(api_client):
    add(api_client)

    response = add(api_client, address=EVM_LOWER, label="again")

    assert response.status_code == 409
    assert response.json()["code"] == "duplicate_address"
    assert AddressBookEntry.objects.count() == 1
    # Another network, or another account, may hold the same address.
    assert add(api_client, network="Base").status_code == 200


def test_another_account_may_hold_the_same_address(api_client, client_with_scopes, other_account):
    add(api_client)
    other = client_with_scopes("addressbook:manage", user=other_account)

    assert add(other).status_code == 200


def test_put_replaces_the_entry_and_delete_answers_with_the_removed_entry(api_client):
    entry = add(api_client).json()

    replaced = api_client.put(
        f"{URL}/{entry['id']}",
        entry_body(label="Cold storage", network="Base", address=ADDRESSES["Base"], verified=True),
        format="json",
    )
    assert replaced.status_code == 200, replaced.json()
    assert (replaced.json()["label"], replaced.json()["network"], replaced.json()["verified"]) == (
        "Cold storage",
        "Base",
        True,
    )

    removed = api_client.delete(f"{URL}/{entry['id']}")
    assert removed.status_code == 200
    assert removed.json()["id"] == entry["id"]
    assert api_client.get(URL).json()["total"] == 0


def test_put_onto_an_address_the_account_already_has_is_a_conflict(api_client):
    add(api_client)
    second = add(api_client, network="Base", address=ADDRESSES["Base"]).json()

    response = api_client.put(f"{URL}/{second['id']}", entry_body(), format="json")

    assert response.status_code == 409
    assert AddressBookEntry.objects.get(pk=second["id"]).network == "Base"


def test_another_accounts_entry_is_not_found_for_read_put_and_delete(api_client, client_with_scopes, other_account):
    entry = add(api_client).json()
    other = client_with_scopes("addressbook:manage", user=other_account)

    assert other.get(f"{URL}/{entry['id']}").status_code == 404
    assert other.put(f"{URL}/{entry['id']}", entry_body(label="mine"), format="json").status_code == 404
    assert other.delete(f"{URL}/{entry['id']}").status_code == 404
    assert other.get(URL).json()["total"] == 0
    assert AddressBookEntry.objects.get(pk=entry["id"]).label == "Shop wallet"


def test_anonymous_callers_are_refused(anon_client):
    assert anon_client.get(URL).status_code == 401
    assert anon_client.post(URL, entry_body(), format="json").status_code == 401


def test_a_key_without_the_addressbook_scope_is_refused(client_with_scopes):
    client = client_with_scopes("drafts:read", "drafts:write")

    response = add(client)

    assert response.status_code == 403
    assert response.json()["code"] == "missing_scope"
    assert client.get(URL).status_code == 403


def test_a_browser_session_manages_the_book_only_with_its_csrf_token(owner):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(owner)
    client.get("/admin/login/")  # sets the csrftoken cookie, as any page of the site would

    assert add(client).status_code == 403
    response = client.post(URL, entry_body(), format="json", HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    assert response.status_code == 200


# --- Drafts naming an entry ------------------------------------------------------------


@pytest.fixture
def _rates_and_fee_addresses():
    with override_settings(PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES):
        yield


def draft_body(**overrides):
    return {"network": "Ethereum", "currency": "USDC", "amountSats": 5_000_000} | overrides


@pytest.mark.usefixtures("_rates_and_fee_addresses")
def test_a_draft_may_name_a_receiving_entry_instead_of_an_address(api_client):
    entry = add(api_client).json()

    response = api_client.post("/api/v1/drafts", draft_body(addressBookId=entry["id"]), format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["receiverAddress"] == ADDRESSES["Ethereum"]


@pytest.mark.usefixtures("_rates_and_fee_addresses")
@pytest.mark.parametrize(
    ("entry_overrides", "draft_overrides", "code"),
    [
        ({"direction": "Sending"}, {}, "not_a_receiving_address"),
        ({}, {"network": "Base"}, "network_mismatch"),
        ({}, {"receiverAddress": ADDRESSES["Ethereum"]}, "ambiguous"),
    ],
)
def test_a_draft_naming_an_unusable_entry_is_refused_naming_the_field(
    api_client, entry_overrides, draft_overrides, code
):
    entry = add(api_client, **entry_overrides).json()

    response = api_client.post(
        "/api/v1/drafts", draft_body(addressBookId=entry["id"], **draft_overrides), format="json"
    )

    assert response.status_code == 400
    assert response.json()["errors"][0] == {
        "field": "addressBookId",
        "code": code,
        "message": response.json()["errors"][0]["message"],
    }


@pytest.mark.usefixtures("_rates_and_fee_addresses")
def test_a_draft_cannot_name_another_accounts_entry(api_client, client_with_scopes, other_account):
    other = client_with_scopes("addressbook:manage", user=other_account)
    foreign = add(other).json()

    response = api_client.post("/api/v1/drafts", draft_body(addressBookId=foreign["id"]), format="json")

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "addressBookId"
    assert response.json()["errors"][0]["code"] == "unknown_entry"


# --- Payment-request options naming an entry ------------------------------------------------


def link_body(option: dict) -> dict:
    return {"fiatCurrency": "EUR", "fiatAmount": 25, "options": [option]}


def test_a_payment_request_option_may_name_a_receiving_entry(api_client):
    entry = add(api_client).json()

    response = api_client.post(
        "/api/v1/payment-requests",
        link_body({"currency": "USDC", "network": "Ethereum", "addressBookId": entry["id"]}),
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert response.json()["options"][0]["receiverAddress"] == ADDRESSES["Ethereum"]


@pytest.mark.parametrize(
    ("option", "field", "code"),
    [
        ({"currency": "USDC", "network": "Base"}, "options[0].addressBookId", "network_mismatch"),
        (
            {"currency": "USDC", "network": "Ethereum", "receiverAddress": ADDRESSES["Ethereum"]},
            "options[0].addressBookId",
            "ambiguous",
        ),
        ({"currency": "USDC", "network": "Ethereum", "addressBookId": None}, "options[0].receiverAddress", "required"),
    ],
)
def test_a_payment_request_option_naming_an_unusable_entry_is_refused_naming_the_field(api_client, option, field, code):
    entry = add(api_client).json()
    if "addressBookId" not in option:
        option = option | {"addressBookId": entry["id"]}

    response = api_client.post("/api/v1/payment-requests", link_body(option), format="json")

    assert response.status_code == 400, response.json()
    assert {"field": field, "code": code} in [
        {"field": e["field"], "code": e["code"]} for e in response.json()["errors"]
    ]

"""In test mode every network selector on the dashboard offers test networks only and starts
on one; in live mode the same forms offer every network they did. A main network posted in
test mode is refused in words a merchant reads (no "test key": the merchant switched test
mode on, they used no key)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.modes import LiveNetworkInTestMode, mode_set, network_check
from drafts.enums import DraftStatus
from payments.registry import NETWORKS
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import make_draft

pytestmark = pytest.mark.django_db

# page, the select's name
SELECTORS = [
    ("/dashboard/drafts/new", "network"),
    ("/dashboard/pay-links/new", "option0_network"),
    ("/dashboard/pay-links/new", "option3_network"),
    ("/dashboard/templates/", "network"),
    ("/dashboard/drafts/", "network"),
    ("/dashboard/address-book/", "network"),
    ("/dashboard/receiving-wallets/", "network"),
]
# where a test-mode form must start on a test network (a list filter starts on "every network")
STARTS_ON_ONE = {
    ("/dashboard/drafts/new", "network"),
    ("/dashboard/pay-links/new", "option0_network"),
    ("/dashboard/templates/", "network"),
    ("/dashboard/address-book/", "network"),
    ("/dashboard/receiving-wallets/", "network"),
}


@pytest.fixture(autouse=True)
def _fee_addresses(settings):
    settings.PLATFORM_FEE_ADDRESSES = FEE_ADDRESSES


def browser(owner, *, test_mode: bool) -> Client:
    client = Client()
    client.force_login(owner)
    assert client.post("/dashboard/mode", {"testMode": "on" if test_mode else "off"}).status_code == 302
    return client


def select_of(page: str, name: str) -> tuple[list[str], str | None]:
    """(the values offered, the one selected) of the <select name=...>."""
    found = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', page, re.S)
    assert found, f"no select named {name}"
    options = re.findall(r'<option value="([^"]*)"([^>]*)>', found.group(1))
    values = [value for value, _attrs in options if value]
    selected = next((value for value, attrs in options if "selected" in attrs), None) or None
    return values, selected


def is_test(network: str) -> bool:
    return NETWORKS[network].is_testnet


@pytest.mark.parametrize(("path", "name"), SELECTORS)
def test_in_test_mode_a_network_selector_offers_test_networks_only_and_starts_on_one(owner, path, name):
    page = browser(owner, test_mode=True).get(path).content.decode()
    values, selected = select_of(page, name)

    assert values and all(is_test(v) for v in values), values
    if (path, name) in STARTS_ON_ONE:
        assert selected is not None and is_test(selected)


@pytest.mark.parametrize(("path", "name"), SELECTORS)
def test_in_live_mode_a_network_selector_offers_the_main_networks(owner, path, name):
    page = browser(owner, test_mode=False).get(path).content.decode()
    values, selected = select_of(page, name)

    assert any(not is_test(v) for v in values), values
    assert selected is None or not is_test(selected)


@pytest.mark.parametrize("test_mode", [True, False])
def test_the_refund_form_offers_the_networks_of_the_payments_side(owner, test_mode):
    network = "Sepolia" if test_mode else "Ethereum"
    draft = make_draft(owner, livemode=not test_mode, network=network, receiver_address=ADDRESSES[network],
                       status=DraftStatus.CONFIRMED, received_base_units=25_000_000)  # fmt: skip
    page = browser(owner, test_mode=test_mode).get(f"/dashboard/drafts/{draft.id}/refund").content.decode()
    values, selected = select_of(page, "network")

    assert values and all(is_test(v) == test_mode for v in values), values
    assert selected == network


def test_a_main_network_posted_in_test_mode_is_refused_in_a_merchants_words(owner):
    client = browser(owner, test_mode=True)
    response = client.post(
        "/dashboard/drafts/new",
        {"network": "Ethereum", "currency": "USDC", "receiverAddress": ADDRESSES["Ethereum"], "pricing": "exact",
         "amount": "12.5", "expiryHours": 24},
    )  # fmt: skip
    message = " ".join(response.context["form"].errors["network"])

    assert "test network" in message.lower()
    assert "key" not in message.lower()
    assert "not one of the available choices" not in message


def test_the_services_refusal_names_the_networks_and_no_key(owner):
    with pytest.raises(LiveNetworkInTestMode) as refused:
        network_check(mode_set(owner, livemode=False), "Mainnet")

    detail = refused.value.detail
    assert "key" not in detail.lower() and "Bitcoin is a main network" in detail
    assert "Ethereum Sepolia" in detail and "Mainnet" not in detail

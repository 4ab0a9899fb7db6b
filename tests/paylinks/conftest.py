from __future__ import annotations

import pytest
from django.test import override_settings

from drafts.models import Draft
from tests.chainwatch.conftest import anvil_factory, ethereum  # noqa: F401 - anvil for the browser test
from tests.drafts.conftest import ADDRESSES
from tests.factories import draft_payment_observed
from tests.formats.conftest import lnurl_server, node_key  # noqa: F401 - Lightning fixtures

BTC_LIGHTNING_ADDRESS = "alice@pay.example.com"


def link_body(**overrides) -> dict:
    body = {
        "fiatCurrency": "EUR",
        "fiatAmount": 25,
        "options": [
            {"currency": "USDC", "network": "Ethereum", "receiverAddress": ADDRESSES["Ethereum"]},
            {"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]},
            {"currency": "BTC", "network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"]},
            {"currency": "EURC", "network": "Solana", "receiverAddress": ADDRESSES["Solana"]},
        ],
        "orderId": "order-1001",
        "memo": "Two coffees",
    }
    body.update(overrides)
    return body


@pytest.fixture(autouse=True)
def _generous_limits():
    with override_settings(
        API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"},
        CHECKOUT_RATE_LIMITS={"read": "10000/min", "write": "10000/min"},
    ):
        yield


@pytest.fixture
def create_link(api_client):
    def create(**overrides) -> dict:
        response = api_client.post("/api/v1/payment-requests", link_body(**overrides), format="json")
        assert response.status_code == 201, response.json()
        return response.json()

    return create


@pytest.fixture
def select(anon_client):
    def post(token: str, currency: str = "USDC", network: str = "Ethereum", **extra):
        return anon_client.post(
            f"/api/v1/checkout/{token}/select", {"currency": currency, "network": network, **extra}, format="json"
        )

    return post


def pay(draft_id: str, *, confirmations: int, received: int | None = None, tx_id: str = "0xpaid", now=None) -> Draft:
    """A payment observed on chain, through the drafts door the watchers use."""
    draft = Draft.objects.get(pk=draft_id)
    return draft_payment_observed(
        draft_id=draft.id,
        tx_id=tx_id,
        received_base_units=draft.amount_base_units if received is None else received,
        confirmations=confirmations,
        now=now,
    )

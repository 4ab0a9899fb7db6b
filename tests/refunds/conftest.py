from __future__ import annotations

import pytest
from django.test import override_settings

from drafts.models import Draft
from tests.drafts.conftest import ADDRESSES
from tests.factories import draft_payment_observed

CUSTOMER = {
    "Ethereum": "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "Base": "0x52908400098527886E0F7030069857D2E4169EE7",
    "Mainnet": "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
}


@pytest.fixture(autouse=True)
def _generous_limits():
    with override_settings(
        API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"},
        CHECKOUT_RATE_LIMITS={"read": "10000/min", "write": "10000/min"},
    ):
        yield


def pay(draft: Draft, *, tx_id: str = "0x" + "ab" * 32, confirmations: int = 100) -> Draft:
    """The payment seen on chain, through the drafts door the watchers use."""
    return draft_payment_observed(
        draft_id=draft.id, tx_id=tx_id, received_base_units=draft.amount_base_units, confirmations=confirmations
    )


@pytest.fixture
def paid_draft(api_client):
    """A Confirmed draft: 25 USDC on Ethereum, paid to the merchant. Each further one is a base unit
    more: a paid amount stays held at its address (AMOUNT_RESERVATION_DAYS)."""
    made = iter(range(100))

    def make(**overrides) -> Draft:
        body = {
            "network": "Ethereum",
            "currency": "USDC",
            "receiverAddress": ADDRESSES["Ethereum"],
            "amountSats": 25_000_000 + next(made),
            **overrides,
        }
        response = api_client.post("/api/v1/drafts", body, format="json")
        assert response.status_code == 201, response.json()
        draft = pay(Draft.objects.get(pk=response.json()["id"]))
        assert draft.status == "Confirmed"
        return draft

    return make


@pytest.fixture
def issue(api_client):
    def post(draft: Draft, **body):
        return api_client.post("/api/v1/refunds", {"draftId": str(draft.id), **body}, format="json")

    return post

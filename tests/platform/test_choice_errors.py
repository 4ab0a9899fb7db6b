"""An invalid_choice error names the values the field takes, so a client can correct itself."""

from __future__ import annotations

import pytest

from payments.enums import Network

pytestmark = pytest.mark.django_db


def field_error(response, field: str) -> dict:
    assert response.status_code == 400, response.content
    (error,) = [e for e in response.json()["errors"] if e["field"] == field]
    return error


def test_a_wrong_network_lists_every_network(api_client):
    body = {"network": "Bitcoin", "currency": "BTC", "amountSats": 1000, "receiverAddress": "x"}
    error = field_error(api_client.post("/api/v1/drafts", body, format="json"), "network")
    assert error["code"] == "invalid_choice"
    assert '"Bitcoin" is not a valid choice' in error["message"]
    for network in Network.values:
        assert network in error["message"]


def test_a_wrong_choice_in_a_nested_body_and_in_a_query_lists_the_values(api_client):
    body = {
        "fiatCurrency": "EUR",
        "fiatAmount": 10,
        "options": [{"currency": "DOGE", "network": "Base", "receiverAddress": "0x"}],
    }
    response = api_client.post("/api/v1/payment-requests", body, format="json")
    assert response.status_code == 400, response.content
    text = str(response.json()["errors"])
    assert "DOGE" in text and "USDC" in text and "EURC" in text
    error = field_error(api_client.get("/api/v1/drafts", {"status": "Paid"}), "status")
    assert "Confirmed" in error["message"] and "Pending" in error["message"]

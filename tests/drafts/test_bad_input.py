"""Bad input gets a field-level problem+json error, never a 500, and writes nothing."""

import pytest

from drafts.models import Draft
from tests.drafts.conftest import ADDRESSES
from webhooks.models import Event

pytestmark = pytest.mark.django_db

BASE = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"]}


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({**BASE}, "amountSats", "required"),
        ({**BASE, "amountSats": 5, "fiatCurrency": "EUR", "fiatAmount": 5}, "amountSats", "ambiguous"),
        ({**BASE, "fiatCurrency": "EUR"}, "fiatAmount", "required"),
        ({**BASE, "amountSats": 0}, "amountSats", "min_value"),
        ({**BASE, "amountSats": -5}, "amountSats", "min_value"),
        ({**BASE, "amountSats": 2**63}, "amountSats", "max_value"),
        ({**BASE, "amountSats": 1.5}, "amountSats", "invalid"),
        ({**BASE, "amountSats": "ten"}, "amountSats", "invalid"),
        ({**BASE, "fiatCurrency": "XYZ", "fiatAmount": 5}, "fiatCurrency", "unknown_fiat_currency"),
        ({**BASE, "fiatCurrency": "EUR", "fiatAmount": 0}, "fiatAmount", "min_value"),
        ({**BASE, "fiatCurrency": "EUR", "fiatAmount": -1}, "fiatAmount", "min_value"),
        ({**BASE, "currency": "USDT", "amountSats": 5}, "currency", "unsupported_combination"),
        ({**BASE, "currency": "DOGE", "amountSats": 5}, "currency", "invalid_choice"),
        ({**BASE, "network": "Dogecoin", "amountSats": 5}, "network", "invalid_choice"),
        ({"currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 5}, "network", "required"),
        ({**BASE, "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 5}, "receiverAddress", "invalid_address"),
        (
            {**BASE, "receiverAddress": ADDRESSES["Base"].lower().replace("0x8617e", "0x8617E"), "amountSats": 5},
            "receiverAddress",
            "invalid_address",
        ),
        ({**BASE, "receiverAddress": " " + ADDRESSES["Base"], "amountSats": 5}, "receiverAddress", "invalid_address"),
        ({**BASE, "receiverAddress": None, "amountSats": 5}, "receiverAddress", "required"),
        ({**BASE, "amountSats": 5, "memo": "x" * 501}, "memo", "max_length"),
        ({**BASE, "amountSats": 5, "expiryHours": 0}, "expiryHours", "min_value"),
        ({**BASE, "amountSats": 5, "expiryHours": 721}, "expiryHours", "max_value"),
        ({**BASE, "amountSats": 5, "requiredConfirmations": 0}, "requiredConfirmations", "min_value"),
        ({**BASE, "amountSats": 5, "requiredConfirmations": 101}, "requiredConfirmations", "max_value"),
        ({**BASE, "amountSats": 5, "colour": "red"}, "colour", "unknown_field"),
        ({**BASE, "amountSats": 5, "paymentMethod": "MultiOutput"}, "paymentMethod", "unsupported_combination"),
        ({**BASE, "amountSats": 5, "paymentMethod": "Lightning"}, "paymentMethod", "unsupported_combination"),
        (
            {"network": "Mainnet", "receiverAddress": ADDRESSES["Testnet"], "amountSats": 5000},
            "receiverAddress",
            "invalid_address",
        ),
    ],
)
def test_bad_draft_requests_are_400_naming_the_field(create, body, field, code):
    response = create(body)
    assert response.status_code == 400, response.json()
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert any(e["field"] == field and e["code"] == code for e in problem["errors"]), problem
    assert not Draft.objects.exists() and not Event.objects.exists()


def test_a_disabled_network_is_400(create, settings):
    settings.ENABLED_NETWORKS = ["Mainnet"]
    response = create({**BASE, "amountSats": 5})
    assert response.status_code == 400
    assert response.json()["code"] == "network_disabled"


@pytest.mark.parametrize(
    ("data", "content_type", "status"),
    [
        ('{"network": "Base",', "application/json", 400),
        ("network=Base", "application/x-www-form-urlencoded", 415),
        ("[]", "application/json", 400),
    ],
)
def test_unparseable_bodies_are_problems(api_client, data, content_type, status):
    response = api_client.post("/api/v1/drafts", data=data, content_type=content_type)
    assert response.status_code == status and response["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize("path", ["/api/v1/drafts/nope", "/api/v1/drafts/123/status", "/api/v1/drafts/nope/cancel"])
def test_non_uuid_ids_are_404(api_client, path):
    assert api_client.get(path).status_code == 404

"""Every JSON body is read by the same rules (docs/decisions.md, "One strictness for every body"):
numbers are JSON numbers, codes and enums are spelled as the schema lists them, and an operation
that takes no body refuses one instead of ignoring it."""

from __future__ import annotations

import pytest

from tests.drafts.conftest import ADDRESSES

pytestmark = pytest.mark.django_db

OPTION = {"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]}
DRAFT = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "fiatCurrency": "EUR"}


def fields_of(response) -> list[str]:
    return [error["field"] for error in response.json().get("errors", [])]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/v1/drafts", DRAFT | {"fiatAmount": "19.99"}, "fiatAmount"),
        ("/api/v1/payment-requests", {"fiatCurrency": "EUR", "fiatAmount": "19.99", "options": [OPTION]}, "fiatAmount"),
        ("/api/v1/payment-requests", {"fiatCurrency": "EUR", "fiatAmount": True, "options": [OPTION]}, "fiatAmount"),
        (
            "/api/v1/payment-requests",
            {"fiatCurrency": "EUR", "fiatAmount": 20, "options": [OPTION], "expiryHours": "24"},
            "expiryHours",
        ),
        ("/api/v1/drafts", DRAFT | {"fiatCurrency": "eur", "fiatAmount": 20}, "fiatCurrency"),
        ("/api/v1/payment-requests", {"fiatCurrency": "eur", "fiatAmount": 20, "options": [OPTION]}, "fiatCurrency"),
        ("/api/v1/drafts", DRAFT | {"currency": "usdc", "fiatAmount": 20}, "currency"),
        (
            "/api/v1/payment-requests",
            {"fiatCurrency": "EUR", "fiatAmount": 20, "options": [OPTION | {"currency": "usdc"}]},
            "options[0].currency",
        ),
        (
            "/api/v1/address-book",
            {"network": "Base", "address": ADDRESSES["Base"], "direction": "Receiving", "verified": "true"},
            "verified",
        ),
        (
            "/api/v1/recurring-templates",
            {"interval": "monthly", "draft": DRAFT | {"fiatAmount": 20}},
            "interval",
        ),
    ],
)
def test_every_body_takes_numbers_as_numbers_and_codes_as_listed(api_client, path, body, field):
    response = api_client.post(path, body, format="json")
    assert response.status_code == 400, response.json()
    assert response["Content-Type"] == "application/problem+json"
    assert fields_of(response) == [field]


def test_a_pay_link_takes_the_amounts_an_agent_sends(api_client):
    for amount in (19.99, 20, 10.0):
        response = api_client.post(
            "/api/v1/payment-requests",
            {"fiatCurrency": "EUR", "fiatAmount": amount, "options": [OPTION]},
            format="json",
        )
        assert response.status_code == 201, response.json()
        assert response.json()["fiatAmount"] == amount


def test_an_operation_that_takes_no_body_refuses_one(api_client):
    draft = api_client.post("/api/v1/drafts", DRAFT | {"fiatAmount": 20}, format="json").json()
    cancel = f"/api/v1/drafts/{draft['id']}/cancel"
    refused = api_client.post(cancel, {"reason": "customer left"}, format="json")
    assert refused.status_code == 400 and refused["Content-Type"] == "application/problem+json"
    assert refused.json()["code"] == "body_not_allowed"
    assert api_client.get(f"/api/v1/drafts/{draft['id']}").json()["status"] == "Pending"  # nothing happened

    assert api_client.post(cancel).status_code == 200  # without a body it is done
    listed = api_client.generic("GET", "/api/v1/drafts", '{"status": "Pending"}', content_type="application/json")
    assert listed.status_code == 400 and listed.json()["code"] == "body_not_allowed"
    deleted = api_client.generic(
        "DELETE", "/api/v1/webhooks/00000000-0000-0000-0000-000000000000", "[1]", content_type="application/json"
    )
    assert deleted.status_code == 400 and deleted.json()["code"] == "body_not_allowed"


def test_an_empty_object_is_no_body(api_client):
    draft = api_client.post("/api/v1/drafts", DRAFT | {"fiatAmount": 20}, format="json").json()
    cancelled = api_client.post(f"/api/v1/drafts/{draft['id']}/cancel", "{ }", content_type="application/json")
    assert cancelled.status_code == 200, cancelled.json()


def test_an_operation_that_takes_a_body_still_reads_it(api_client):
    created = api_client.post("/api/v1/drafts", DRAFT | {"fiatAmount": 20}, format="json")
    assert created.status_code == 201, created.json()

from __future__ import annotations

from decimal import Decimal

import pytest

pytestmark = pytest.mark.django_db


def test_the_schedule_is_the_specs(api_client):
    response = api_client.get("/api/v1/fees/schedule")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"tiers", "minFeeUsd", "maxFeeUsd", "dustLimitSats", "pricedIn", "note"}
    assert body["tiers"] == [
        {"upToUsd": 10, "percent": 0.49},
        {"upToUsd": 50, "percent": 0.39},
        {"upToUsd": 100, "percent": 0.29},
        {"upToUsd": 500, "percent": 0.19},
        {"upToUsd": 2000, "percent": 0.14},
        {"upToUsd": 10000, "percent": 0.09},
        {"upToUsd": 50000, "percent": 0.04},
        {"upToUsd": 100000, "percent": 0.02},
        {"upToUsd": None, "percent": 0.01},
    ]
    assert body["minFeeUsd"] == 0.01
    assert body["maxFeeUsd"] == 100
    assert body["dustLimitSats"] == 546
    assert "USD" in body["pricedIn"]
    assert "output" in body["note"] and "accrues" in body["note"]


def test_numbers_are_json_numbers_not_strings(api_client):
    raw = api_client.get("/api/v1/fees/schedule").content.decode()
    assert '"upToUsd":10,' in raw.replace(" ", "")
    assert '"maxFeeUsd":100,' in raw.replace(" ", "")


def test_the_schedule_follows_the_settings(api_client, settings):
    settings.FEE_TIERS = [{"upToUsd": 25, "percent": "1.5"}, {"upToUsd": None, "percent": "0.25"}]
    settings.FEE_MAX_USD = Decimal("50")
    body = api_client.get("/api/v1/fees/schedule").json()
    assert body["tiers"] == [{"upToUsd": 25, "percent": 1.5}, {"upToUsd": None, "percent": 0.25}]
    assert body["maxFeeUsd"] == 50


def test_it_needs_the_fees_read_scope(client_with_scopes, anon_client):
    assert client_with_scopes("fees:read").get("/api/v1/fees/schedule").status_code == 200
    assert client_with_scopes("rates:read").get("/api/v1/fees/schedule").status_code == 403
    assert anon_client.get("/api/v1/fees/schedule").status_code == 401

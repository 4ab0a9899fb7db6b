from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from payments.rates import FIAT_CURRENCIES

pytestmark = pytest.mark.django_db

ASSETS = ["BTC", "ETH", "SOL", "USDC", "USDT", "EURC"]


def test_it_lists_every_asset_in_usd_by_default_from_the_snapshot(api_client):
    response = api_client.get("/api/v1/rates")
    assert response.status_code == 200
    body = response.json()
    assert body["ccy"] == "USD"
    assert [item["asset"] for item in body["rates"]] == ASSETS
    assert "snapshot" in body["source"]
    btc = body["rates"][0]
    assert btc["rate"] == 114000
    assert btc["asOf"].startswith("2025-10-01")
    assert set(btc) == {"asset", "rate", "source", "live", "fetchedAt", "asOf", "ageSeconds", "agreeing", "sources"}
    assert body["fetchedAt"]
    assert body["live"] is False and btc["live"] is False  # the bundled table: said plainly
    assert btc["agreeing"] == 0 and btc["ageSeconds"] > 86400
    assert btc["sources"] == [
        {
            "leg": "crypto",
            "source": "snapshot 2025-10-01 (bundled, not live)",
            "rate": 114000,
            "used": True,
            "dropped": None,
        }
    ]


def test_it_prices_one_asset_in_the_asked_currency(api_client):
    body = api_client.get("/api/v1/rates", {"ccy": "SEK", "asset": "BTC"}).json()
    assert body["ccy"] == "SEK"
    assert [item["asset"] for item in body["rates"]] == ["BTC"]
    assert body["rates"][0]["rate"] == pytest.approx(114000 * 9.42)


def test_lowercase_codes_are_accepted(api_client):
    body = api_client.get("/api/v1/rates", {"ccy": "eur", "asset": "eurc"}).json()
    assert body["ccy"] == "EUR" and body["rates"][0]["asset"] == "EURC"


def test_an_unknown_currency_is_a_400_listing_the_valid_values(api_client):
    response = api_client.get("/api/v1/rates", {"ccy": "XYZ"})
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["errors"][0]["field"] == "ccy"
    assert body["validValues"] == list(FIAT_CURRENCIES)
    assert "SEK" in body["detail"]


def test_an_unknown_asset_is_a_400_listing_the_valid_values(api_client):
    response = api_client.get("/api/v1/rates", {"asset": "DOGE"})
    assert response.status_code == 400
    body = response.json()
    assert body["errors"][0]["field"] == "asset"
    assert body["validValues"] == ASSETS


@pytest.mark.parametrize("query", [{"ccy": ""}, {"ccy": "x" * 5000}, {"asset": ""}, {"ccy": "\x00"}])
def test_garbage_query_values_are_a_400_not_a_500(api_client, query):
    response = api_client.get("/api/v1/rates", query)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] in query


def test_no_live_rates_without_the_bundled_table_is_a_503_with_retry_after(api_client, settings):
    settings.RATES_CRYPTO_PROVIDERS = ["coingecko=http://127.0.0.1:9"]
    settings.RATES_BUNDLED_ALLOWED = False
    response = api_client.get("/api/v1/rates")
    assert response.status_code == 503
    assert response.json()["code"] == "rates_unavailable"
    assert response["Retry-After"] == str(settings.RATES_REFRESH_SECONDS)


def test_the_bundled_table_answers_at_any_time_and_says_its_date(api_client, settings):
    with time_machine.travel(timezone.now() + timedelta(seconds=settings.RATES_MAX_AGE_SECONDS + 60)):
        body = api_client.get("/api/v1/rates").json()
    assert body["rates"][0]["asOf"].startswith("2025-10-01")


def test_it_needs_the_rates_read_scope(client_with_scopes, anon_client):
    assert client_with_scopes("rates:read").get("/api/v1/rates").status_code == 200
    denied = client_with_scopes("drafts:read").get("/api/v1/rates")
    assert denied.status_code == 403 and denied.json()["code"] == "missing_scope"
    assert anon_client.get("/api/v1/rates").status_code == 401


def test_the_route_has_no_trailing_slash(api_client):
    assert api_client.get("/api/v1/rates/").status_code == 404

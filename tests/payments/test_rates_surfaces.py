"""What the rate feed means for the surfaces: 503 without a fresh price, the sources behind
every quote (API, dashboard), and the bundled table said plainly (healthz, dashboard, PDF)."""

from __future__ import annotations

import subprocess
import time
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from drafts.models import Draft
from payments.rates import refresh_rates
from tests.drafts.conftest import ADDRESSES
from tests.payments.conftest import open_er_api_payload
from tests.payments.test_rate_sources import BASE, COINGECKO, serve

pytestmark = pytest.mark.django_db

FIAT_DRAFT = {"network": "Mainnet", "currency": "BTC", "receiverAddress": ADDRESSES["Mainnet"], "fiatCurrency": "EUR"}


@pytest.fixture
def live(settings, provider_server):
    """Three crypto sources (Bitstamp 10% off) and one fiat source, live; no bundled table."""
    url = provider_server.url
    settings.RATES_CRYPTO_PROVIDERS = [f"kraken={url}", f"coinbase={url}", f"bitstamp={url}", f"coingecko={url}"]
    settings.RATES_FX_PROVIDERS = [f"open-er-api={url}"]
    settings.RATES_BUNDLED_ALLOWED = False
    serve(
        provider_server,
        kraken={**BASE, "BTC": "67000"},
        coinbase={**BASE, "BTC": "67010"},
        bitstamp={**BASE, "BTC": "73700"},
    )
    provider_server.answer(COINGECKO, status=429, body=b'{"status": {"error_code": 429, "error_message": "limit"}}')
    provider_server.answer("/v6/latest/USD", open_er_api_payload(int(time.time()), {"EUR": 0.9}))
    served = refresh_rates()
    assert not served["crypto"].startswith("failed"), served
    return provider_server


def test_without_a_fresh_price_creation_and_requote_are_503_never_an_old_price(api_client, settings, live):
    created = api_client.post("/api/v1/drafts", {**FIAT_DRAFT, "fiatAmount": 100}, format="json")
    assert created.status_code == 201, created.json()
    later = timezone.now() + timedelta(minutes=settings.QUOTE_LOCK_MINUTES + 1)
    assert later - timezone.now() > timedelta(seconds=settings.RATES_MAX_AGE_SECONDS)
    with time_machine.travel(later):  # the quote expired, the live table too old: nothing refreshed it
        refused = api_client.post("/api/v1/drafts", {**FIAT_DRAFT, "fiatAmount": 100}, format="json")
        requote = api_client.post(f"/api/v1/drafts/{created.json()['id']}/requote")
    for response in (refused, requote):
        assert response.status_code == 503
        assert response["Content-Type"].startswith("application/problem+json")
        assert response.json()["code"] == "rates_unavailable"
        assert response["Retry-After"] == str(settings.RATES_REFRESH_SECONDS)
    assert Draft.objects.count() == 1


def test_a_quote_records_which_sources_gave_which_price(api_client, owner, live):
    body = api_client.post("/api/v1/drafts", {**FIAT_DRAFT, "fiatAmount": 100}, format="json").json()
    quote = body["quote"]
    assert quote["live"] is True and quote["rate"] == 60304.5  # median(67000, 67010) * 0.9
    crypto = quote["sources"]["crypto"]
    assert crypto["rate"] == "67005" and crypto["agreeing"] == 2
    by_source = {s["source"]: s for s in crypto["sources"]}
    assert by_source["kraken"]["rate"] == "67000" and by_source["kraken"]["used"] is True
    assert by_source["bitstamp"] == {**by_source["bitstamp"], "rate": "73700", "used": False, "dropped": "outlier"}
    assert quote["sources"]["fx"]["sources"][0]["source"] == "open.er-api.com"
    fetched = api_client.get(f"/api/v1/drafts/{body['id']}").json()
    assert fetched["quote"]["sources"] == quote["sources"]  # kept with the draft, for audit
    assert Draft.objects.get(pk=body["id"]).quote_sources["crypto"]["rate"] == "67005"
    browser = Client()
    browser.force_login(owner)
    page = browser.get(f"/dashboard/drafts/{body['id']}/").content.decode()
    assert 'id="rate-sources"' in page and "bitstamp 73700 (left out: outlier)" in page
    assert "kraken 67000" in page and "not live" not in page


def test_rates_say_source_age_and_agreement_per_asset(api_client, live):
    body = api_client.get("/api/v1/rates", {"ccy": "EUR", "asset": "BTC"}).json()
    assert body["live"] is True
    (btc,) = body["rates"]
    assert btc["live"] is True and btc["agreeing"] == 1  # the fiat leg has one source here
    assert btc["source"] == "median of kraken, coinbase + open.er-api.com"
    assert 3600 <= btc["ageSeconds"] < 3700  # the older leg: open.er-api's table updated an hour ago
    assert {"leg": "crypto", "source": "bitstamp", "rate": 73700, "used": False, "dropped": "outlier"} in btc["sources"]


def test_healthz_reports_provider_failures_and_outliers(anon_client, live):
    detail = anon_client.get("/healthz").json()["detail"]["rates"]
    assert detail["live"] is True and detail["bundledAllowed"] is False
    assert detail["providers"]["coingecko"]["failures"] == 1
    assert "429" in detail["providers"]["coingecko"]["lastError"]
    assert detail["providers"]["bitstamp"]["outliers"] == 1
    assert detail["providers"]["kraken"]["failures"] == 0


def test_the_bundled_table_is_said_plainly_on_healthz_the_dashboard_and_the_pdf(
    anon_client, api_client, owner, tmp_path
):
    health = anon_client.get("/healthz").json()
    assert health["status"] == "ok"
    assert any("not live" in notice and "2025-10-01" in notice for notice in health["notices"])
    assert health["detail"]["rates"]["bundledInUse"] is True and health["detail"]["rates"]["live"] is False
    browser = Client()
    browser.force_login(owner)
    assert 'id="rates-not-live"' in browser.get("/dashboard/").content.decode()
    draft = api_client.post("/api/v1/drafts", {**FIAT_DRAFT, "fiatAmount": 100}, format="json").json()
    assert draft["quote"]["live"] is False
    assert "(not live)" in browser.get(f"/dashboard/drafts/{draft['id']}/").content.decode()
    pdf = tmp_path / "draft.pdf"
    pdf.write_bytes(api_client.get(f"/api/v1/drafts/{draft['id']}/pdf").content)
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert "not live" in " ".join(text.split())


def test_no_banner_while_live_rates_are_fresh(owner, live):
    browser = Client()
    browser.force_login(owner)
    assert "rates-not-live" not in browser.get("/dashboard/").content.decode()


def test_the_start_up_notice_says_it_even_with_the_shared_cache_down(settings):
    from about.notices import setup_notices

    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
    }
    notices = [n for n in setup_notices() if "RATES_BUNDLED_ALLOWED" in n]
    assert len(notices) == 1 and '"not live"' in notices[0]

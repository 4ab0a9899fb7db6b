"""Pay links and rates: no fresh price is a 503, and the bundled table is said plainly to the payer."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone, translation

from notifications.services import emails_send_due
from payments.rates import refresh_rates
from tests.paylinks.conftest import pay
from tests.payments.conftest import open_er_api_payload, provider_server  # noqa: F401 - the local provider
from tests.payments.test_rate_sources import BASE, serve

pytestmark = pytest.mark.django_db


def test_choosing_an_option_without_a_fresh_price_is_a_503_with_retry_after(create_link, select, settings):
    link = create_link()
    settings.RATES_BUNDLED_ALLOWED = False  # no live provider either: no price at all
    response = select(link["token"])
    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "rates_unavailable"
    assert response["Retry-After"] == str(settings.RATES_REFRESH_SECONDS)


def test_the_pay_page_and_the_receipt_say_not_live_for_a_bundled_rate(anon_client, create_link, select):
    link = create_link()
    draft_id = select(link["token"], "BTC", "Mainnet").json()["draftId"]
    page = anon_client.get(f"/pay/{link['token']}").content.decode()
    # The payer is told how old the bundled prices are (the table's date), beside the rate.
    assert "1\xa0BTC = " in page
    assert '(not live: bundled, dated rate table: <time datetime="2025-10-01">Oct. 1, 2025</time>)' in page
    anon_client.post(f"/api/v1/checkout/{link['token']}/receipt", {"email": "payer@example.net"}, format="json")
    pay(draft_id, confirmations=6)
    emails_send_due()
    (receipt,) = [m for m in mail.outbox if m.to == ["payer@example.net"]]
    assert "Rate: 1\xa0BTC = 97,128.0\xa0EUR (not live" in receipt.body
    html = receipt.alternatives[0][0]
    assert "not live" in html


def test_the_pay_page_tells_a_payer_of_stale_rates_without_the_operators_figures(
    anon_client,
    create_link,
    settings,
    provider_server,  # noqa: F811
):
    settings.RATES_CRYPTO_PROVIDERS = [f"kraken={provider_server.url}", f"coinbase={provider_server.url}"]
    settings.RATES_FX_PROVIDERS = [f"open-er-api={provider_server.url}"]
    settings.RATES_BUNDLED_ALLOWED = False
    serve(provider_server, kraken=BASE, coinbase=BASE)
    provider_server.answer("/v6/latest/USD", open_er_api_payload(int(time.time())))
    refresh_rates()
    link = create_link()
    later = timezone.now() + timedelta(seconds=settings.RATES_MAX_AGE_SECONDS + 1)
    with time_machine.travel(later), translation.override("de"):
        page = anon_client.post(f"/pay/{link['token']}/select", {"option": "BTC:Mainnet:"}, HTTP_ACCEPT_LANGUAGE="de")
    assert page.status_code == 200
    text = page.content.decode()
    assert '<p class="error" role="alert">' in text
    assert "Wechselkurse sind gerade nicht verfügbar; versuchen Sie es gleich noch einmal." in text
    assert str(settings.RATES_MAX_AGE_SECONDS) not in text and "abgerufen" not in text


def test_a_live_rate_is_shown_without_the_words(anon_client, create_link, select, settings, provider_server):  # noqa: F811
    settings.RATES_CRYPTO_PROVIDERS = [f"kraken={provider_server.url}", f"coinbase={provider_server.url}"]
    settings.RATES_FX_PROVIDERS = [f"open-er-api={provider_server.url}"]
    settings.RATES_BUNDLED_ALLOWED = False
    serve(provider_server, kraken=BASE, coinbase=BASE)
    provider_server.answer("/v6/latest/USD", open_er_api_payload(int(time.time())))
    refresh_rates()
    link = create_link()
    assert select(link["token"], "BTC", "Mainnet").status_code in (200, 201)
    page = anon_client.get(f"/pay/{link['token']}").content.decode()
    assert "1\xa0BTC = " in page and "not live" not in page

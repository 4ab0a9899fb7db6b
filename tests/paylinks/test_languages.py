"""The payer reads the pay page, the checkout API's messages, the receipt email and the PDF
in their own language: chosen from Accept-Language or on the page (a cookie, no account),
with amounts and dates written as that language writes them. The merchant's own API stays
English whatever a client sends."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.core import mail
from django.test import Client
from django.utils import translation

from notifications.services import emails_send_due
from payments.rates import RatesUnavailable
from tests.paylinks.conftest import pay

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser() -> Client:
    return Client(enforce_csrf_checks=True)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def html_tag(html: str) -> str:
    return re.search(r"<html[^>]*>", html).group(0)


def test_a_german_browser_gets_the_page_in_german_with_euros_written_the_german_way(browser, create_link):
    link = create_link(fiatAmount=19.99)

    response = browser.get(f"/pay/{link['token']}", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9,en;q=0.5")

    html = response.content.decode()
    assert html_tag(html) == '<html lang="de" dir="ltr" data-number-locale="de-u-nu-latn">'
    text = text_of(html)
    assert "19,99 €" in text and "Wählen Sie, wie Sie bezahlen möchten." in text
    assert "USDC im Netzwerk Ethereum" in text
    assert response["Content-Language"] == "de"
    assert "Accept-Language" in response["Vary"] and "Cookie" in response["Vary"]


def test_a_vnd_amount_reads_right_in_german(browser, create_link):
    link = create_link(fiatCurrency="VND", fiatAmount=1250000)

    html = browser.get(f"/pay/{link['token']}", HTTP_ACCEPT_LANGUAGE="de").content.decode()

    assert "1.250.000\xa0₫" in html and "1,250,000" not in html


def test_arabic_is_right_to_left_with_arabic_indic_digits(browser, create_link):
    link = create_link(fiatAmount=19.99)

    html = browser.get(f"/pay/{link['token']}", HTTP_ACCEPT_LANGUAGE="ar").content.decode()

    assert html_tag(html) == '<html lang="ar" dir="rtl" data-number-locale="ar-EG-u-nu-arab">'
    assert "١٩٫٩٩" in html and "اختر طريقة الدفع." in html


@pytest.mark.parametrize(
    ("header", "language"),
    [("zh-CN,zh;q=0.9", "zh-hans"), ("pt-BR", "pt-br"), ("pt", "pt-br"), ("ja-JP", "ja"), ("sv-SE", "en")],
)
def test_the_browser_language_picks_the_closest_one_offered(browser, create_link, header, language):
    link = create_link()

    html = browser.get(f"/pay/{link['token']}", HTTP_ACCEPT_LANGUAGE=header).content.decode()

    assert f'lang="{language}"' in html_tag(html)


def test_the_language_picked_on_the_page_is_kept_in_a_cookie_over_the_browser_language(browser, create_link):
    link = create_link()
    page = f"/pay/{link['token']}"
    html = browser.get(page, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<select id="lang" name="lang">' in html and 'value="ja" lang="ja"' in html  # a plain GET form

    picked = browser.get(page, {"lang": "ja"}, HTTP_ACCEPT_LANGUAGE="de")
    later = browser.get(page, HTTP_ACCEPT_LANGUAGE="de")

    assert picked.cookies["lang"].value == "ja" and picked.cookies["lang"]["httponly"]
    assert 'lang="ja"' in html_tag(picked.content.decode())
    assert 'lang="ja"' in html_tag(later.content.decode())
    assert "お支払い方法を選んでください。" in later.content.decode()


def test_an_unknown_language_in_the_link_is_ignored(browser, create_link):
    link = create_link()

    response = browser.get(f"/pay/{link['token']}", {"lang": "xx"}, HTTP_ACCEPT_LANGUAGE="fr")

    assert 'lang="fr"' in html_tag(response.content.decode()) and "lang" not in response.cookies


def test_checkout_api_messages_for_the_payer_follow_accept_language(anon_client, api_client, create_link):
    link = create_link()
    api_client.post(f"/api/v1/payment-requests/{link['id']}/cancel")

    refused = anon_client.post(
        f"/api/v1/checkout/{link['token']}/select",
        {"currency": "USDC", "network": "Ethereum"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="es",
    )
    detail = anon_client.get(f"/api/v1/checkout/{link['token']}", HTTP_ACCEPT_LANGUAGE="es").json()

    assert refused.status_code == 409
    assert refused.json()["detail"] == "El comercio canceló esta solicitud de pago."
    assert refused.json()["code"] == "payment_request_cancelled"  # codes never change with the language
    assert detail["options"][0]["label"] == "USDC en Ethereum"
    assert detail["fiatAmount"] == 25  # numbers in JSON stay numbers


def test_a_checkout_api_error_has_its_title_and_summary_in_the_payers_language(anon_client, create_link):
    link = create_link()

    response = anon_client.post(
        f"/api/v1/checkout/{link['token']}/select", {}, format="json", HTTP_ACCEPT_LANGUAGE="de"
    )

    body = response.json()
    assert response.status_code == 400 and response["Content-Language"] == "de"
    assert body["title"] == "Ungültige Anfrage"
    assert body["detail"] == "Probleme in der Anfrage: 2 (Felder: currency, network)."
    assert body["code"] == "required" and [e["field"] for e in body["errors"]] == ["currency", "network"]


def test_the_merchants_own_api_stays_english_whatever_the_client_sends(api_client):
    response = api_client.post(
        "/api/v1/payment-requests", {"fiatCurrency": "EUR"}, format="json", HTTP_ACCEPT_LANGUAGE="de"
    )

    assert response.status_code == 400
    body = response.content.decode()
    assert response.get("Content-Language") in (None, "en")
    assert "Dieses Feld" not in body and "erforderlich" not in body
    assert response.json()["title"] == "Invalid request"
    assert response.json()["detail"] == "2 problems in the request (fields: fiatAmount, options)."


def test_the_receipt_is_written_in_the_language_the_payer_asked_for_it_in(browser, create_link, select):
    link = create_link(fiatAmount=19.99)
    draft_id = select(link["token"]).json()["draftId"]
    asked = browser.post(
        f"/pay/{link['token']}/receipt", {"email": "payer@example.net"}, HTTP_ORIGIN="null", HTTP_ACCEPT_LANGUAGE="de"
    )
    assert asked.status_code == 303

    pay(draft_id, confirmations=12)
    emails_send_due()

    (receipt,) = [m for m in mail.outbox if m.to == ["payer@example.net"]]
    merchant = f" an {settings.PAYMENT_URI_LABEL}" if settings.PAYMENT_URI_LABEL else ""
    assert receipt.subject == f"Quittung: 19,99 €{merchant} bezahlt"  # the subject's spaces are plain
    body = receipt.body
    assert "Betrag: 19,99\xa0€" in body
    assert re.search(r"Bezahlt: \d+,\d{6}\xa0USDC im Netzwerk Ethereum", body)
    assert "Methode: Eine Überweisung" in body
    assert re.search(r"Wann: \d\d\.\d\d\.\d{4}, \d\d:\d\d:\d\d UTC", body)
    html = receipt.alternatives[0][0]
    assert '<html lang="de" dir="ltr">' in html and "<strong>bestätigt</strong>" in html


def test_rates_unavailable_is_told_in_the_language_of_the_request():
    with translation.override("de"):
        german = RatesUnavailable().detail
    with translation.override("en"):
        english = RatesUnavailable().detail

    assert german == "Wechselkurse sind gerade nicht verfügbar; versuchen Sie es gleich noch einmal."
    assert english == "Exchange rates are unavailable right now; try again shortly."

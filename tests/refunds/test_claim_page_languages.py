"""The refund claim page is a payer's page: it speaks the customer's language (Accept-Language,
or the language picked on the page), with lang/dir set and no English left in any state."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.paylinks.test_every_language import LANGUAGES, leftovers
from tests.refunds.conftest import CUSTOMER

pytestmark = pytest.mark.django_db


def path_of(refund: dict) -> str:
    return "/refund/" + refund["claimUrl"].rsplit("/", 1)[1]


@pytest.fixture
def claim_pages(api_client, paid_draft, issue) -> dict[str, str]:
    pages = {}
    claimable = issue(paid_draft(), fiatCurrency="EUR", fiatAmount=7.5).json()
    pages["claimable"] = path_of(claimable)
    claimed = issue(paid_draft(), full=True).json()
    Client().post(path_of(claimed), {"refund_address": CUSTOMER["Ethereum"]})
    pages["claimed"] = path_of(claimed)
    cancelled = issue(paid_draft(), full=True).json()
    assert api_client.post(f"/api/v1/refunds/{cancelled['id']}/cancel").status_code == 200
    pages["cancelled"] = path_of(cancelled)
    pages["not-found"] = "/refund/" + "n" * 43
    return pages


def page(path: str, language: str) -> str:
    html = Client().get(path, HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert f'lang="{language}"' in html[:200]
    return html


def test_every_state_of_the_claim_page_is_translated_in_every_language(claim_pages):
    english = {name: page(path, "en") for name, path in claim_pages.items()}
    assert "Tell us where to send your refund." in english["claimable"]
    assert "The merchant is reviewing your refund." in english["claimed"]
    assert "The merchant cancelled this refund." in english["cancelled"]
    assert "Refund link not found" in english["not-found"]
    problems = {}
    for language in LANGUAGES:
        for name, path in claim_pages.items():
            if left := leftovers(english[name], page(path, language), language):
                problems[f"{language} {name}"] = sorted(left)
    assert problems == {}


def test_arabic_reads_right_to_left_with_arabic_digits_and_the_choice_is_kept(claim_pages):
    client = Client()
    html = client.get(claim_pages["claimable"] + "?lang=ar").content.decode()
    assert '<html lang="ar" dir="rtl"' in html and "٧٫٥٠" in html
    assert client.cookies["lang"].value == "ar"
    again = client.get(claim_pages["claimable"], HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="ar" dir="rtl"' in again


def test_a_bad_refund_address_is_refused_in_the_customers_language(api_client, paid_draft, issue):
    refund = issue(paid_draft(), full=True).json()
    token = refund["claimUrl"].rsplit("/", 1)[1]

    api = Client().post(
        f"/api/v1/refund-claims/{token}",
        {"refundAddress": CUSTOMER["Mainnet"]},
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE="ja",
    )
    page = Client().post(path_of(refund), {"refund_address": "0x123"}, HTTP_ACCEPT_LANGUAGE="ja")

    message = "有効な Ethereum のアドレスではありません。確認してもう一度貼り付けてください。"
    body = api.json()
    assert api.status_code == 400 and body["title"] == "無効なリクエスト"
    assert body["code"] == "invalid_address" and body["errors"][0]["field"] == "refundAddress"
    assert body["errors"][0]["message"] == message and body["network"] == "Ethereum"
    assert page.status_code == 422 and message in page.content.decode()
    # In English the validator's own reason stays: it says what is wrong with the address.
    english = (
        Client()
        .post(
            f"/api/v1/refund-claims/{token}",
            {"refundAddress": CUSTOMER["Mainnet"]},
            content_type="application/json",
            HTTP_ACCEPT_LANGUAGE="en",
        )
        .json()
    )
    assert english["errors"][0]["message"] != "This is not a valid Ethereum address; check it and paste it again."
    assert english["code"] == "invalid_address" and "Ethereum" in english["errors"][0]["message"]

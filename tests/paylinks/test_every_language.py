"""Every page, email and PDF a payer reads, in every language, with no English left over.

A text is "left over" when the same piece of prose (a text node, a label, a title, a word the
script shows) reads identically on the English rendering and on another language's, once the
values that are the same in every language are taken out (the merchant's name and memo,
addresses, transaction ids, currency codes, network names, the language picker's names).
A translation the catalog deliberately keeps as in English (French "Transaction") is allowed:
the check is that the page shows the catalog, not English the catalog never saw.
"""

from __future__ import annotations

import html as html_lib
import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from django.conf import settings
from django.template.loader import render_to_string
from django.test import Client
from django.utils import timezone, translation
from django.utils.translation import to_locale
from rest_framework.test import APIClient

from accounts.profiles import merchant_profile_update
from drafts.models import Draft
from drafts.services import PaymentObservation, draft_payment_apply
from paylinks.models import PaymentRequest
from payments.enums import Network
from tests.drafts.conftest import ADDRESSES
from tests.paylinks.conftest import pay

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = [code for code, _name in settings.LANGUAGES if code != "en"]
TX_ID = "0x" + "ab" * 32
PAYMENT_URI = f"ethereum:{ADDRESSES['Ethereum']}"
# Attributes whose values a payer reads or hears (or the script shows).
READ_ATTRIBUTES = re.compile(r'\b(?:aria-label|title|alt|placeholder|data-text-[a-z-]+|data-prefix)="([^"]*)"')


def pieces(document: str) -> set[str]:
    """The pieces of prose of an HTML or plain-text document."""
    document = re.sub(r"<(script|style)\b.*?</\1>", " ", document, flags=re.S)
    found = set(READ_ATTRIBUTES.findall(document))
    found.update(re.split(r"<[^>]+>|\n", document))
    return {" ".join(html_lib.unescape(piece).split()) for piece in found} - {""}


def data_values() -> list[str]:
    values = [
        "Two coffees",
        "order-1001",
        "Corner Coffee",
        "help@corner.example",
        settings.PAYMENT_URI_LABEL,
        TX_ID,
        PAYMENT_URI,
        *ADDRESSES.values(),
        *(str(label) for label in Network.labels),
        *(name for _code, name in settings.LANGUAGES),
        "Lightning",
    ]
    return sorted((v for v in values if v), key=len, reverse=True)


def without_data(piece: str) -> str:
    for value in data_values():
        piece = piece.replace(value, " ")
    return " ".join(piece.split()).strip(" :")


def prose(piece: str) -> bool:
    piece = without_data(piece)
    if " " not in piece and len(piece) > 30:
        return False  # an identifier (an invoice, a token), never prose
    return re.search(r"[a-z]{2,}", piece) is not None


@cache
def same_as_english(language: str) -> frozenset[str]:
    """The catalog's entries this language translates with the English words themselves."""
    with (ROOT / "locale" / to_locale(language) / "LC_MESSAGES" / "django.po").open("rb") as po:
        catalog = read_po(po)
    return frozenset(m.id for m in catalog if isinstance(m.id, str) and m.id and m.string == m.id)


def leftovers(english: str, translated: str, language: str) -> set[str]:
    shared = {p for p in pieces(english) & pieces(translated) if prose(p)}
    return {p for p in shared if without_data(p) not in same_as_english(language)}


@pytest.fixture
def states(create_link, select, api_client, lnurl_server, make_key, other_account) -> dict[str, str]:
    """A pay link in each state a payer can find one in: name -> token."""
    found = {"choose": create_link()["token"]}

    # A merchant with a profile (name, support contact, way back) and a test-mode link.
    merchant_profile_update(
        user=other_account,
        changes={
            "display_name": "Corner Coffee",
            "support_email": "help@corner.example",
            "support_url": "https://corner.example/help",
        },
    )
    merchant = APIClient()
    merchant.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(user=other_account, livemode=False)}")
    body = {
        "fiatCurrency": "EUR",
        "fiatAmount": 18.5,
        "options": [{"currency": "USDC", "network": "Sepolia", "receiverAddress": ADDRESSES["Sepolia"]}],
        "returnUrl": "https://corner.example/order/1001",
    }
    test_mode = merchant.post("/api/v1/payment-requests", body, format="json").json()
    select(test_mode["token"], "USDC", "Sepolia")
    found["test-mode"] = test_mode["token"]
    named_mismatch = merchant.post("/api/v1/payment-requests", body, format="json").json()
    chosen = select(named_mismatch["token"], "USDC", "Sepolia").json()
    pay(chosen["draftId"], confirmations=1, received=chosen["amountSats"] - 1_000_000, tx_id=TX_ID)
    found["named-mismatch"] = named_mismatch["token"]
    named_cancelled = merchant.post("/api/v1/payment-requests", body, format="json").json()
    merchant.post(f"/api/v1/payment-requests/{named_cancelled['id']}/cancel")
    found["named-cancelled"] = named_cancelled["token"]

    lightning = create_link(
        fiatCurrency="USD",
        options=[{"currency": "BTC", "network": "Mainnet", "receiverAddress": lnurl_server.address}],
    )
    select(lightning["token"], "BTC", "Mainnet", method="Lightning")
    found["lightning"] = lightning["token"]

    pending = create_link()
    select(pending["token"])
    found["pending"] = pending["token"]

    seen = create_link()
    pay(select(seen["token"]).json()["draftId"], confirmations=3, tx_id=TX_ID)
    found["seen"] = seen["token"]

    short = create_link()
    chosen = select(short["token"]).json()
    pay(chosen["draftId"], confirmations=1, received=chosen["amountSats"] - 1_000_000, tx_id=TX_ID)
    found["mismatch"] = short["token"]

    over = create_link()
    chosen = select(over["token"]).json()
    pay(chosen["draftId"], confirmations=1, received=chosen["amountSats"] + 1_000_000, tx_id=TX_ID)
    found["overpaid"] = over["token"]

    paid = create_link()
    pay(select(paid["token"]).json()["draftId"], confirmations=12, tx_id=TX_ID)
    PaymentRequest.objects.filter(token=paid["token"]).update(payer_email="payer@example.net")
    found["paid"] = paid["token"]

    reverted = create_link()  # a confirmed payment that left the chain (a reorg), as the watcher reports it
    reverted_draft = pay(select(reverted["token"]).json()["draftId"], confirmations=12, tx_id=TX_ID)
    draft_payment_apply(
        draft_id=reverted_draft.id, observation=PaymentObservation(tx_id=TX_ID, received_base_units=0, vanished=True)
    )
    found["reverted"] = reverted["token"]

    lapsed = create_link()
    draft_id = select(lapsed["token"]).json()["draftId"]
    Draft.objects.filter(pk=draft_id).update(expires_at=timezone.now())
    found["quote-lapsed"] = lapsed["token"]

    expired = create_link()
    PaymentRequest.objects.filter(token=expired["token"]).update(expires_at=timezone.now())
    found["expired"] = expired["token"]

    cancelled = create_link()
    api_client.post(f"/api/v1/payment-requests/{cancelled['id']}/cancel")
    found["cancelled"] = cancelled["token"]

    found["not-found"] = "n" * 43
    return found


def page(token: str, language: str) -> str:
    response = Client().get(f"/pay/{token}", HTTP_ACCEPT_LANGUAGE=language)
    assert f'lang="{language}"' in response.content.decode()[:200]
    return response.content.decode()


@pytest.mark.slow
def test_every_state_of_the_pay_page_is_translated_in_every_language(states):
    english = {name: page(token, "en") for name, token in states.items()}
    english["busy"] = _busy("en")
    markers = {
        "choose": "Choose how you want to pay.",
        "lightning": "Copy invoice",
        "pending": "Copy address",
        "seen": "Payment seen.",
        "mismatch": "Send the missing amount to complete this payment",
        "overpaid": "Do not send another payment.",
        "paid": "A receipt has been emailed to you.",
        "reverted": "Your payment is no longer on the chain.",
        "quote-lapsed": "Choose a currency again",
        "expired": "Ask the merchant for a new link.",
        "cancelled": "This payment request was cancelled.",
        "not-found": "Payment link not found",
        "test-mode": "Simulate payment",
        "named-mismatch": "Corner Coffee can also accept the amount received as payment in full",
        "named-cancelled": "Back to Corner Coffee",
        "busy": "Too many requests",
    }
    assert {name: markers[name] in html for name, html in english.items()} == dict.fromkeys(markers, True)
    problems = {}
    for language in LANGUAGES:
        for name, token in states.items():
            if left := leftovers(english[name], page(token, language), language):
                problems[f"{language} {name}"] = sorted(left)
        if left := leftovers(english["busy"], _busy(language), language):
            problems[f"{language} busy"] = sorted(left)
    assert problems == {}


def _busy(language: str) -> str:
    with translation.override(language):
        return render_to_string("paylinks/busy.html")


def _receipt(language: str) -> dict[str, str]:
    context = {
        "data": {
            "fiatAmount": 25,
            "fiatCurrency": "EUR",
            "orderId": "order-1001",
            "sentAmount": "29.123456",
            "sentCurrency": "USDC",
            "network": "Ethereum",
            "txId": TX_ID,
            "occurredAt": "2026-11-25T20:27:39.227872Z",
        },
        "memo": "Two coffees",
        "merchant": "Corner Coffee",
        "rate": {"value": "0.858400000000000000", "currency": "USDC", "fiat": "EUR", "live": False},
        "method": "SingleOutput",
        "zone": "Europe/Berlin",
    }
    with translation.override(language):
        return {
            kind: render_to_string(f"emails/payment_receipt{kind}", context)
            for kind in ("_subject.txt", ".txt", ".html")
        }


def _pdf_page(language: str) -> str:
    context = {
        "draft_id": "5d1c9b86-0000-4000-8000-000000000001",
        "amount": "29.123456 USDC",
        "network": "Ethereum",
        "receiver_address": ADDRESSES["Ethereum"],
        "fiat": "€25.00",
        "rate": "0.858400 EUR",
        "rate_currency": "USDC",
        "rate_live": False,
        "payment_method": "One transfer",
        "memo": "Two coffees",
        "fee_lines": [],
        "expires_at": datetime(2027, 1, 15, 9, 30, tzinfo=UTC),
        "created_at": datetime(2027, 1, 14, 9, 30, tzinfo=UTC),
        "zone": "UTC",
        "payment_uri": PAYMENT_URI,
        "qr_svg": "",
    }
    with translation.override(language):
        return render_to_string("drafts/draft_pdf.html", context)


def _receipt_pdf_page(language: str) -> str:
    """The receipt's page with every line it can have (the merchant's copy, an accepted amount, late)."""
    context = {
        "draft_id": "5d1c9b86-0000-4000-8000-000000000001",
        "merchant": "Corner Coffee",
        "support_email": "help@corner.example",
        "amount": "29.123456 USDC",
        "paid": "28.123456 USDC",
        "paid_fiat": "€24.14",
        "accepted": True,
        "rate": "0.858400 EUR",
        "rate_live": False,
        "network": "Ethereum",
        "payment_method": "One transfer",
        "memo": "Two coffees",
        "order_id": "order-1001",
        "paid_at": datetime(2027, 1, 14, 9, 30, tzinfo=UTC),
        "paid_late": True,
        "transactions": [{"txid": TX_ID, "url": f"https://etherscan.io/tx/{TX_ID}"}],
        "fee_lines": [{"label": "Service fee", "amount": "0.114460 USDC"}],
        "merchant_copy": True,
        "zone": "UTC",
    }
    with translation.override(language):
        context["fee_lines"][0]["label"] = translation.gettext("Service fee")
        return render_to_string("drafts/receipt_pdf.html", context).replace(f"https://etherscan.io/tx/{TX_ID}", "")


def test_the_receipt_email_and_the_pdf_are_translated_in_every_language():
    english_receipt, english_pdf, english_receipt_pdf = _receipt("en"), _pdf_page("en"), _receipt_pdf_page("en")
    problems = {}
    for language in LANGUAGES:
        receipt = _receipt(language)
        for kind, text in receipt.items():
            if left := leftovers(english_receipt[kind], text, language):
                problems[f"{language} receipt{kind}"] = sorted(left)
        # The PDF's values come formatted from drafts.documents; its own words come from here.
        pdf = _pdf_page(language).replace("One transfer", "").replace("€25.00", "")
        if left := leftovers(english_pdf, pdf, language):
            problems[f"{language} pdf"] = sorted(left)
        receipt_pdf = _receipt_pdf_page(language)
        for value in ("One transfer", "€24.14", "29.123456 USDC", "28.123456 USDC", "0.114460 USDC"):
            receipt_pdf = receipt_pdf.replace(value, "")
        if left := leftovers(english_receipt_pdf, receipt_pdf, language):
            problems[f"{language} receipt pdf"] = sorted(left)
    assert problems == {}


def test_the_check_finds_english_left_on_a_page(states):
    # The same page with its catalog switched off: everything a payer reads is English.
    english = page(states["pending"], "en")
    with translation.override("en"):
        untranslated = render_to_string("paylinks/busy.html")

    assert "Waiting for your payment." in leftovers(english, english.replace('lang="en"', 'lang="de"'), "de")
    assert "Too many requests" in leftovers(_busy("en"), untranslated, "de")
    assert leftovers(english, page(states["pending"], "de"), "de") == set()

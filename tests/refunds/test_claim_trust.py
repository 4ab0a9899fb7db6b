"""A customer can trust a refund claim link: the claim page and the claim email name the
merchant (name, logo, support contact), the order, and the amount in fiat and in the asset;
the email is written in the language the customer paid in (the pay page's), not the merchant's."""

from __future__ import annotations

import io
import re
from html import unescape

import pytest
from django.core import mail
from django.test import Client
from PIL import Image

from accounts.profiles import merchant_profile_get, merchant_profile_update
from drafts.models import Draft
from notifications.services import emails_send_due
from paylinks.models import PaymentRequest
from refunds.models import Refund
from tests.paylinks.conftest import link_body, pay

pytestmark = pytest.mark.django_db


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 32), (31, 95, 191)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def shop(owner):
    merchant_profile_update(
        user=owner,
        changes={"display_name": "Lumen Books", "support_email": "help@lumen.example",
                 "support_url": "https://lumen.example/help", "language": "en"},
        logo=png(),
    )  # fmt: skip
    return merchant_profile_get(user=owner)


def paid_by_a_payer_reading(api_client, language: str) -> Draft:
    """A pay link (order-1001, 25 EUR) paid in USDC on Ethereum by a payer who chose on the pay
    page in `language`."""
    link = api_client.post("/api/v1/payment-requests", link_body(), format="json").json()
    payer = Client()
    chosen = payer.post(f"/pay/{link['token']}/select", {"option": "USDC:Ethereum:SingleOutput"},
                        HTTP_ORIGIN="null", HTTP_ACCEPT_LANGUAGE=language)  # fmt: skip
    assert chosen.status_code in (200, 303), chosen.content[:500]
    draft_id = PaymentRequest.objects.get(token=link["token"]).draft_id
    return pay(str(draft_id), confirmations=100)


def issue(api_client, draft: Draft, **body) -> Refund:
    response = api_client.post(
        "/api/v1/refunds",
        {"draftId": str(draft.id), "customerEmail": "buyer@example.com", **(body or {"full": True})},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return Refund.objects.get(pk=response.json()["id"])


def claim_email():
    emails_send_due(limit=100)
    [message] = [m for m in mail.outbox if m.to == ["buyer@example.com"]]
    html = next(body for body, kind in message.alternatives if kind == "text/html")
    return message, unescape(html)


def text_of(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_the_claim_page_names_the_merchant_the_order_and_both_amounts(api_client, shop):
    draft = paid_by_a_payer_reading(api_client, "en")
    refund = issue(api_client, draft, amountSats=draft.received_base_units // 2)  # half of it
    html = Client().get(f"/refund/{refund.token}", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    text = text_of(html)

    assert "Refund from Lumen Books" in text
    assert f'<img class="logo" src="{shop.logo_url}"' in html
    assert "mailto:help@lumen.example" in html and 'href="https://lumen.example/help"' in html
    assert "Order order-1001" in text
    half = draft.received_base_units // 2
    assert f"{half / 10**6:.6f} USDC" in text  # the asset's amount
    assert "€12.50" in text  # its share of the 25 EUR paid


def test_the_claim_email_names_the_merchant_the_order_and_both_amounts(api_client, shop):
    draft = paid_by_a_payer_reading(api_client, "en")
    issue(api_client, draft)  # all of it
    message, html = claim_email()
    text = text_of(html) + " " + message.body

    assert "Lumen Books" in message.subject
    assert "From: Lumen Books" in text
    assert re.search(r'<img src="https?://[^"]+/merchant-logos/[0-9a-f]+\.png"', html)
    assert "help@lumen.example" in text and "https://lumen.example/help" in html
    assert "Order order-1001" in text
    assert "€25.00" in text and f"{draft.received_base_units / 10**6:.6f} USDC" in text
    assert "/refund/" in message.body


def test_the_claim_email_is_in_the_language_the_customer_paid_in(api_client, shop):
    draft = paid_by_a_payer_reading(api_client, "de")  # the merchant reads English
    refund = issue(api_client, draft)
    message, html = claim_email()

    assert refund.customer_language == "de"
    assert '<html lang="de"' in html
    assert "Bestellung order-1001" in text_of(html)
    assert "Lumen Books" in message.subject and "Lumen Books" in text_of(html)
    assert "You are being refunded" not in message.body


def test_a_refund_of_a_draft_made_without_a_pay_page_speaks_the_merchants_language(api_client, owner, shop):
    merchant_profile_update(user=owner, changes={"language": "fr"})
    made = api_client.post("/api/v1/drafts", {"network": "Ethereum", "currency": "USDC", "amountSats": 5_000_000,
                                              "receiverAddress": link_body()["options"][0]["receiverAddress"]},
                           format="json").json()  # fmt: skip
    refund = issue(api_client, pay(made["id"], confirmations=100))
    _message, html = claim_email()

    assert refund.customer_language == "fr" and '<html lang="fr"' in html

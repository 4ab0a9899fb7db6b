"""The hosted pay page with the Django test client: every state, the security headers, no
owner data, and the whole pick-and-pay path with JavaScript off (plain form posts)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from drafts.models import Draft
from drafts.tasks import expire_drafts
from paylinks.models import PaymentRequest
from tests.drafts.conftest import ADDRESSES
from tests.paylinks.conftest import pay

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser() -> Client:
    """A browser without JavaScript, with Django's CSRF checks on as in production."""
    return Client(enforce_csrf_checks=True)


def page(browser: Client, token: str, **params):
    response = browser.get(f"/pay/{token}", params)
    return response, response.content.decode()


def choose(browser: Client, token: str, option: str):
    # What a browser sends under Referrer-Policy: no-referrer: the form, and Origin: null.
    return browser.post(f"/pay/{token}/select", {"option": option}, HTTP_ORIGIN="null")


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_page_carries_a_strict_policy_and_keeps_the_token_out_of_referrers(browser, create_link):
    link = create_link()

    response, html = page(browser, link["token"])

    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy and "form-action 'self'" in policy
    assert "unsafe-inline" not in policy and "http" not in policy
    assert response["Referrer-Policy"] == "no-referrer"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Cache-Control"] == "no-store"
    # Nothing inline for the policy to block, and nothing from another origin.
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == []
    assert " style=" not in html and "<style" not in html
    assert re.findall(r'(?:src|href)="(?:https?:)?//', html) == []


def test_the_page_shows_amount_memo_and_options_and_nothing_of_the_owner(browser, create_link, owner):
    link = create_link()

    _, html = page(browser, link["token"])

    text = text_of(html)
    assert "€25.00" in text and "Two coffees" in text and "Order order-1001" in text
    for label in ("USDC on Ethereum", "USDC on Base", "BTC on Bitcoin", "EURC on Solana"):
        assert label in text
    for secret in (owner.email, link["id"], *ADDRESSES.values()):
        assert secret not in html


def test_with_javascript_off_a_payer_picks_an_option_and_gets_address_amount_and_qr(browser, create_link):
    link = create_link()

    chosen = choose(browser, link["token"], "USDC:Ethereum:SingleOutput")
    assert chosen.status_code == 303 and chosen["Location"] == f"/pay/{link['token']}"
    response, html = page(browser, link["token"])

    draft = Draft.objects.get()
    assert str(draft.payment_request_id) == link["id"]
    text = text_of(html)
    assert ADDRESSES["Ethereum"] in text
    assert f"{draft.amount_base_units / 10**6:.6f} USDC" in text
    assert "<svg" in html and "viewBox" in html  # the QR, inline
    assert f'href="{draft.payment_uri.replace("&", "&amp;")}"' in html  # open in wallet
    assert "Waiting for your payment" in text
    assert response["Content-Security-Policy"].startswith("default-src 'none'")


def test_the_page_sets_no_cookie_and_its_form_needs_only_the_token(browser, create_link):
    link = create_link()

    opened = browser.get(f"/pay/{link['token']}")
    chosen = choose(browser, link["token"], "USDC:Ethereum:SingleOutput")
    forged = browser.post("/pay/" + "x" * 43 + "/select", {"option": "USDC:Ethereum:SingleOutput"})

    assert not opened.cookies and not chosen.cookies  # nothing ambient for a forged post to ride on
    assert "csrfmiddlewaretoken" not in opened.content.decode()
    assert chosen.status_code == 303 and Draft.objects.count() == 1
    assert forged.status_code == 404 and Draft.objects.count() == 1


def test_switching_currency_on_the_page_cancels_the_first_draft(browser, create_link):
    link = create_link()
    choose(browser, link["token"], "USDC:Ethereum:SingleOutput")

    choose(browser, link["token"], "BTC:Mainnet:SingleOutput")
    _, html = page(browser, link["token"])

    assert Draft.objects.filter(status="Pending").get().currency == "BTC"
    assert ADDRESSES["Mainnet"] in html and ADDRESSES["Ethereum"] not in html


def test_a_seen_payment_shows_its_confirmations(browser, create_link, select):
    link = create_link()
    draft_id = select(link["token"]).json()["draftId"]
    pay(draft_id, confirmations=4, tx_id="0xabc123")

    _, html = page(browser, link["token"])

    text = text_of(html)
    assert "Payment seen" in text and "Confirming: 4 of 12 confirmations" in text and "0xabc123" in text
    assert 'data-poll="on"' in html


def test_a_wrong_amount_is_explained_in_plain_words(browser, create_link, select):
    link = create_link()
    chosen = select(link["token"]).json()
    received = chosen["amountSats"] + 1_000_000  # 1 USDC over, within 10%
    pay(chosen["draftId"], confirmations=1, received=received)

    _, html = page(browser, link["token"])

    text = text_of(html)
    assert f"We received {received / 10**6:.6f} USDC, but the request was for {chosen['amount']} USDC" in text
    assert "Do not send another payment" in text


def test_a_paid_request_thanks_the_payer_with_the_transaction_id(browser, create_link, select):
    link = create_link()
    pay(select(link["token"]).json()["draftId"], confirmations=12, tx_id="0xfeedbeef")

    response, html = page(browser, link["token"])

    text = text_of(html)
    assert "Payment confirmed. Thank you!" in text and "0xfeedbeef" in text
    assert 'data-poll="on"' not in html and "<svg" not in html


def test_an_expired_request_tells_the_payer_not_to_pay(browser, create_link):
    link = create_link(expiryHours=1)

    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        _, html = page(browser, link["token"])
        refused = choose(browser, link["token"], "USDC:Ethereum:SingleOutput")

    assert "This payment request has expired" in text_of(html)
    assert "Do not send a payment" in text_of(html) and 'name="option"' not in html
    assert refused.status_code == 200 and "has expired" in text_of(refused.content.decode())
    assert not Draft.objects.exists()


def test_a_cancelled_request_says_so(browser, api_client, create_link):
    link = create_link()
    api_client.post(f"/api/v1/payment-requests/{link['id']}/cancel")

    _, html = page(browser, link["token"])

    assert "This payment request was cancelled. Do not send a payment" in text_of(html) and 'name="option"' not in html


def test_a_choice_whose_quote_ran_out_unpaid_asks_to_choose_again(browser, create_link, select):
    link = create_link()
    select(link["token"])

    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        expire_drafts()
        _, html = page(browser, link["token"])

    assert "Choose a currency again" in text_of(html) and 'name="option"' in html
    assert ADDRESSES["Ethereum"] not in html


def test_an_unknown_token_shows_a_not_found_page(browser):
    response, html = page(browser, "x" * 43)

    assert response.status_code == 404 and "Payment link not found" in html
    assert response["Referrer-Policy"] == "no-referrer"


def test_a_payer_can_ask_for_a_receipt_without_javascript(browser, create_link, select):
    link = create_link()
    select(link["token"])

    sent = browser.post(f"/pay/{link['token']}/receipt", {"email": "payer@example.net"}, HTTP_ORIGIN="null")
    _, html = page(browser, link["token"])

    assert sent.status_code == 303
    assert PaymentRequest.objects.get().payer_email == "payer@example.net"
    assert "A receipt will be emailed to you" in text_of(html)


def test_the_page_is_rate_limited_per_ip(browser, create_link, settings):
    link = create_link()
    settings.CHECKOUT_RATE_LIMITS = {"read": "2/min", "write": "2/min"}

    statuses = [browser.get(f"/pay/{link['token']}").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]


def test_a_lightning_option_shows_the_invoice_and_its_qr_instead_of_an_address(browser, api_client, lnurl_server):
    body = {
        "fiatCurrency": "USD",
        "fiatAmount": 10.00,
        "options": [{"currency": "BTC", "network": "Mainnet", "receiverAddress": lnurl_server.address}],
    }
    link = api_client.post("/api/v1/payment-requests", body, format="json").json()

    choose(browser, link["token"], "BTC:Mainnet:Lightning")
    _, html = page(browser, link["token"])

    draft = Draft.objects.get()
    assert draft.method == "Lightning" and draft.bolt11 in html
    assert f'href="lightning:{draft.bolt11}"' in html and "<svg" in html
    assert "Lightning invoice" in text_of(html) and lnurl_server.address not in html


def test_a_choice_past_its_expiry_asks_to_choose_again_before_the_expiry_task_runs(browser, create_link, select):
    link = create_link()
    select(link["token"])

    with time_machine.travel(timezone.now() + timedelta(hours=1, seconds=1)):
        _, html = page(browser, link["token"])

    assert "Choose a currency again" in text_of(html) and ADDRESSES["Ethereum"] not in html


def test_a_solana_draft_is_also_offered_as_a_transaction_request_beside_the_transfer_request(
    browser, create_link, settings
):
    link = create_link()
    choose(browser, link["token"], "USDC:Ethereum:SingleOutput")
    assert "transaction request" not in page(browser, link["token"])[1]

    choose(browser, link["token"], "EURC:Solana:SingleOutput")
    response, html = page(browser, link["token"])

    draft = Draft.objects.get(status="Pending")
    url = f"solana:{settings.BASE_URL}/api/v1/solana-pay/{draft.id}"
    assert f'href="{draft.payment_uri.replace("&", "&amp;")}"' in html  # the transfer request stays
    assert f'href="{url}" id="open-transaction-request"' in html
    assert "Pay with a Solana wallet app (transaction request)" in text_of(html)
    assert html.count("<svg") >= 2  # both QR codes

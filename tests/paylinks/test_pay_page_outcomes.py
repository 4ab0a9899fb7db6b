"""What the pay page tells the payer, without JavaScript: who is paid and how to reach them,
what happened to the payment (confirming, short, not matching, late), whether the amount still
holds after the quote window, the transaction on a block explorer, and the way back to the shop."""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone
from PIL import Image

from accounts.profiles import merchant_profile_update
from chainwatch.models import ObservedTransfer, UnmatchedTransfer
from chainwatch.networks import token_address
from chainwatch.unmatched import reports_record
from drafts.models import Draft
from paylinks.models import PaymentRequest
from tests.drafts.conftest import ADDRESSES
from tests.paylinks.conftest import pay

pytestmark = pytest.mark.django_db

SHOP = "https://corner.example/order/1001"


@pytest.fixture
def browser() -> Client:
    return Client(enforce_csrf_checks=True)


@pytest.fixture
def profile(owner):
    logo = io.BytesIO()
    Image.new("RGB", (120, 60), (0, 90, 160)).save(logo, format="PNG")
    return merchant_profile_update(
        user=owner,
        changes={
            "display_name": "Corner Coffee",
            "support_email": "help@corner.example",
            "support_url": "https://corner.example/help",
        },
        logo=logo.getvalue(),
    )


def text(browser: Client, token: str) -> tuple[str, str]:
    html = browser.get(f"/pay/{token}").content.decode()
    return html, re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def chosen(select, token: str) -> Draft:
    response = select(token)
    assert response.status_code in (200, 201), response.json()
    return Draft.objects.get(pk=response.json()["draftId"])


def test_the_page_names_the_merchant_shows_the_logo_and_the_support_contact(browser, create_link, profile):
    link = create_link()
    html, words = text(browser, link["token"])
    assert "Paying Corner Coffee" in words
    assert f'src="{profile.logo_url}"' in html
    assert 'href="mailto:help@corner.example"' in html and 'href="https://corner.example/help"' in html
    assert "Questions? Contact Corner Coffee" in words
    assert browser.get(profile.logo_url)["Content-Type"] == "image/png"  # same origin: img-src 'self'


def test_the_cancelled_and_expired_pages_name_whom_to_contact(browser, api_client, create_link, profile):
    cancelled = create_link(returnUrl=SHOP)
    api_client.post(f"/api/v1/payment-requests/{cancelled['id']}/cancel")
    html, words = text(browser, cancelled["token"])
    assert "This payment request was cancelled" in words and "help@corner.example" in words
    assert f'href="{SHOP}"' in html and "Back to Corner Coffee" in words

    expired = create_link(expiryHours=1)
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        html, words = text(browser, expired["token"])
    assert "has expired" in words and "Ask Corner Coffee for a new link" in words and "help@corner.example" in words


def test_a_return_url_shows_only_once_paid_and_must_be_https(browser, api_client, create_link, select, profile):
    link = create_link(returnUrl=SHOP)
    draft = chosen(select, link["token"])
    html, words = text(browser, link["token"])
    assert "Back to Corner Coffee" not in words  # not while the payer still has to pay
    pay(str(draft.id), confirmations=12)
    html, words = text(browser, link["token"])
    assert "Payment confirmed" in words and f'href="{SHOP}"' in html and "Back to Corner Coffee" in words

    for bad in ("http://corner.example/", "javascript:alert(1)", "https://"):
        response = api_client.post(
            "/api/v1/payment-requests",
            {
                "fiatCurrency": "EUR",
                "fiatAmount": 5,
                "options": [{"currency": "USDC", "network": "Ethereum", "receiverAddress": ADDRESSES["Ethereum"]}],
                "returnUrl": bad,
            },
            format="json",
        )
        assert response.status_code == 400, bad
        assert response["Content-Type"].startswith("application/problem+json")
        assert response.json()["errors"][0]["field"] == "returnUrl"
    assert PaymentRequest.objects.count() == 1


def test_without_javascript_a_waiting_page_refreshes_itself_and_offers_a_reload(browser, create_link, select):
    link = create_link()
    html, words = text(browser, link["token"])
    assert 'http-equiv="refresh"' not in html  # nothing to wait for before a choice
    draft = chosen(select, link["token"])
    html, words = text(browser, link["token"])
    assert '<noscript><meta http-equiv="refresh" content="20"></noscript>' in html
    assert f'<a href="/pay/{link["token"]}">Reload to check</a>' in html
    pay(str(draft.id), confirmations=12)
    html, words = text(browser, link["token"])
    assert 'http-equiv="refresh"' not in html and "Reload to check" not in words


def test_a_seen_payment_shows_n_of_m_and_the_transaction_on_the_explorer(browser, create_link, select, settings):
    link = create_link()
    draft = chosen(select, link["token"])
    pay(str(draft.id), confirmations=4, tx_id="0xabc")
    html, words = text(browser, link["token"])
    assert "Confirming: 4 of 12 confirmations" in words
    assert 'href="https://etherscan.io/tx/0xabc"' in html

    settings.BLOCK_EXPLORER_URLS = {"Ethereum": "https://explorer.example/eth/tx/{txid}"}
    html, _ = text(browser, link["token"])
    assert 'href="https://explorer.example/eth/tx/0xabc"' in html
    settings.BLOCK_EXPLORER_URLS = {"Ethereum": ""}
    html, _ = text(browser, link["token"])
    assert "block explorer" not in html


def test_a_short_payment_within_the_window_says_what_arrived_what_is_missing_and_what_the_merchant_can_do(
    browser, create_link, select, profile
):
    link = create_link()
    draft = chosen(select, link["token"])
    short = draft.amount_base_units - draft.amount_base_units // 20  # 5% short
    pay(str(draft.id), confirmations=1, received=short)
    html, words = text(browser, link["token"])
    assert "A payment arrived, but less than the amount due" in words
    assert f"Received {short / 10**6:.6f} USDC" in words
    assert f"Missing {(draft.amount_base_units - short) / 10**6:.6f} USDC" in words
    assert "Send the missing amount to complete this payment" in words
    assert "Corner Coffee can also accept the amount received as payment in full, or refund it" in words
    assert 'id="send-heading"' not in html  # no invitation to pay the full amount again


def test_a_payer_sees_only_their_own_payment_never_a_transfer_that_pays_nothing(browser, create_link, select, profile):
    # Two payers, two links, one shared address: a transfer that pays nothing is reported to
    # the merchant with both drafts as candidates, but neither payer's page or status shows it.
    first, second = create_link(), create_link()
    mine, theirs = chosen(select, first["token"]), chosen(select, second["token"])
    assert mine.receiver_address == theirs.receiver_address
    far_off = ObservedTransfer.objects.create(
        network="Ethereum",
        txid="0xfaroff",
        index=0,
        currency="USDC",
        token_address=token_address("Ethereum", "USDC"),
        receiver_address=mine.receiver_address.lower(),
        amount_base_units=20_000_000,
        block_height=100,
        block_hash="0xblock",
    )
    assert reports_record(transfers=[far_off], head=200, now=timezone.now()) == 1
    report = UnmatchedTransfer.objects.get(transfer=far_off)
    assert {str(mine.id), str(theirs.id)} <= set(report.candidate_draft_ids)  # the merchant's to sort out
    for link in (first, second):
        html, words = text(browser, link["token"])
        assert "0xfaroff" not in html and "20.000000 USDC" not in words
        assert "does not match this request" not in words
        status = browser.get(f"/api/v1/checkout/{link['token']}/status").json()
        assert "0xfaroff" not in str(status) and "unmatchedTransfers" not in status

    # A transfer attached to a draft still shows on that draft's page, and only there.
    pay(str(mine.id), confirmations=1, tx_id="0xmine")
    html, words = text(browser, first["token"])
    assert 'href="https://etherscan.io/tx/0xmine"' in html
    assert browser.get(f"/api/v1/checkout/{first['token']}/status").json()["paidTxId"] == "0xmine"
    html, _ = text(browser, second["token"])
    assert "0xmine" not in html
    assert browser.get(f"/api/v1/checkout/{second['token']}/status").json()["paidTxId"] is None


def test_a_late_payment_says_it_still_counts(browser, create_link, select):
    link = create_link()
    draft = chosen(select, link["token"])
    Draft.objects.filter(pk=draft.pk).update(status="Expired", expires_at=timezone.now() - timedelta(minutes=1))
    pay(str(draft.id), confirmations=12)
    _, words = text(browser, link["token"])
    assert "Payment confirmed" in words
    assert "arrived after the payment window closed. It was still received and counts" in words


def test_after_the_quote_window_the_page_says_the_amount_still_holds(browser, create_link, select):
    link = create_link()
    draft = chosen(select, link["token"])
    _, words = text(browser, link["token"])
    assert "amount still holds" not in words and "locked" in words
    with time_machine.travel(draft.quote_expires_at + timedelta(seconds=5)):
        _, words = text(browser, link["token"])
    assert "Send exactly" in words
    assert "The quote window is over, but the amount still holds" in words


def test_after_payment_the_receipt_line_says_it_was_sent_not_that_it_will_be(browser, create_link, select):
    link = create_link()
    draft = chosen(select, link["token"])
    browser.post(f"/pay/{link['token']}/receipt", {"email": "payer@example.com"}, HTTP_ORIGIN="null")
    _, words = text(browser, link["token"])
    assert "will be emailed to you once the payment is confirmed" in words
    pay(str(draft.id), confirmations=12)
    _, words = text(browser, link["token"])
    assert "A receipt has been emailed to you" in words and "once the payment is confirmed" not in words


def test_the_checkout_api_names_the_merchant_logo_support_and_way_back(anon_client, create_link, profile):
    link = create_link(returnUrl=SHOP)
    body = anon_client.get(f"/api/v1/checkout/{link['token']}").json()
    assert body["merchantName"] == "Corner Coffee"
    assert body["merchantLogoUrl"].endswith(profile.logo_url)
    assert body["supportEmail"] == "help@corner.example"
    assert body["supportUrl"] == "https://corner.example/help"
    assert body["returnUrl"] == SHOP
    assert "owner@example.com" not in str(body)

"""A paid draft's document is a receipt: who was paid (and how to reach them), what arrived in
crypto and in fiat, on which network, each transaction with its explorer link and when it was
paid, in the pay page's language. The payer's copy (/pay/{token}/document) never shows the
platform's fee; the merchant's (the API's and the dashboard's PDF) does. Before it is paid the
same link gives the payment request. Read back from the PDF's text with poppler's pdftotext."""

from __future__ import annotations

import re
import shutil
import subprocess
from decimal import Decimal

import pytest

from accounts.profiles import merchant_profile_update
from drafts.enums import DraftStatus
from drafts.models import Draft
from tests.paylinks.conftest import pay

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils (scripts/system-deps.sh test)"),
]
TX = "0x" + "ab" * 32
EXPLORER = f"https://etherscan.io/tx/{TX}"


def pdf_text(pdf: bytes, tmp_path) -> str:
    path = tmp_path / "document.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True).stdout
    return re.sub(r"[ \t]+", " ", text)


def unwrapped(text: str) -> str:
    """The text without line breaks or spaces: a long txid or link may wrap in the PDF."""
    return re.sub(r"\s+", "", text)


def payer_copy(anon_client, token: str, language: str, tmp_path) -> str:
    response = anon_client.get(f"/pay/{token}/document", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    return pdf_text(response.content, tmp_path)


@pytest.fixture
def corner(owner):
    merchant_profile_update(
        user=owner,
        changes={"display_name": "Corner Coffee", "support_email": "help@corner.example", "time_zone": "Europe/Berlin"},
    )
    return owner


@pytest.fixture
def chosen(corner, create_link, select):
    """A 25 EUR pay link whose payer chose USDC on Ethereum."""
    link = create_link(memo="Two coffees", orderId="A-1042")
    draft = Draft.objects.get(pk=select(link["token"], currency="USDC", network="Ethereum").json()["draftId"])
    return link["token"], draft


def usdc(draft: Draft, base_units: int, *, decimal_comma: bool = False) -> str:
    text = f"{Decimal(base_units).scaleb(-6):.6f}"
    return (text.replace(".", ",") if decimal_comma else text) + " USDC"


def test_before_it_is_paid_the_payer_gets_the_payment_request(chosen, anon_client, tmp_path):
    token, draft = chosen

    text = payer_copy(anon_client, token, "en", tmp_path)

    assert "Payment draft" in text and "Receipt" not in text
    assert usdc(draft, draft.amount_base_units) in text and "Pay from your own wallet" in text
    assert f'href="/pay/{token}/document"' not in anon_client.get(f"/pay/{token}").content.decode()
    assert "Service fee" not in text  # an accrued fee is not the payer's business


@pytest.mark.parametrize(
    ("language", "says"),
    [
        (
            "en",
            {
                "title": "Receipt",
                "thanks": "Thank you. Your payment to Corner Coffee is confirmed.",
                "fiat": "€25.00",
                "network": "Network Ethereum",
                "when": "Europe/Berlin",
                "tx": "Transaction",
                "support": "Questions about this payment? Contact Corner Coffee:",
                "fee": "Service fee",
                "copy": "Merchant's copy",
            },
        ),
        (
            "de",
            {
                "title": "Quittung",
                "thanks": "Vielen Dank. Ihre Zahlung an Corner Coffee ist bestätigt.",
                "fiat": "25,00 €",
                "network": "Netzwerk Ethereum",
                "when": "Europe/Berlin",
                "tx": "Transaktion",
                "support": "Fragen zu dieser Zahlung? Wenden Sie sich an Corner Coffee:",
                "fee": "Servicegebühr",
                "copy": "Exemplar des Händlers",
            },
        ),
    ],
)
def test_a_paid_draft_gives_the_payer_a_receipt_in_the_pages_language_without_the_fee(
    chosen, anon_client, api_client, tmp_path, language, says
):
    token, draft = chosen
    paid = pay(str(draft.id), confirmations=draft.required_confirmations, tx_id=TX)
    assert paid.status == DraftStatus.CONFIRMED

    page = anon_client.get(f"/pay/{token}", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert f'href="/pay/{token}/document" id="receipt-pdf"' in page  # the paid page links the receipt
    text = payer_copy(anon_client, token, language, tmp_path)

    assert says["title"] in text and ("Payment draft" not in text and "Zahlungsentwurf" not in text)
    assert says["thanks"] in text
    assert usdc(draft, draft.amount_base_units, decimal_comma=language == "de") in text
    assert f"≈ {says['fiat']}" in text.replace("\u00a0", " ")
    assert says["network"] in text and "Two coffees" in text and "A-1042" in text
    assert says["tx"] in text and TX in unwrapped(text) and EXPLORER in unwrapped(text)
    assert says["when"] in text  # the time paid, in the merchant's zone, named
    assert says["support"] in text and "help@corner.example" in text
    assert says["fee"] not in text and says["copy"] not in text
    assert "0x52908400098527886E0F7030069857D2E4169EE7" not in text  # what to send where: no longer

    merchant = api_client.get(f"/api/v1/drafts/{draft.id}/pdf", {"lang": language})
    assert merchant.status_code == 200
    merchant_text = pdf_text(merchant.content, tmp_path)
    assert says["title"] in merchant_text and says["copy"] in merchant_text
    fee = Decimal(str(draft.platform_fee["feeAmount"]))
    assert fee > 0 and says["fee"] in merchant_text
    assert TX in unwrapped(merchant_text)


def test_a_short_amount_the_merchant_accepted_is_the_amount_on_the_receipt(chosen, anon_client, api_client, tmp_path):
    token, draft = chosen
    received = draft.amount_base_units * 95 // 100
    pay(str(draft.id), confirmations=draft.required_confirmations, received=received, tx_id=TX)
    assert Draft.objects.get(pk=draft.pk).status == DraftStatus.AMOUNT_MISMATCH

    accepted = api_client.post(f"/api/v1/drafts/{draft.id}/accept-received")
    assert accepted.status_code == 200 and accepted.json()["status"] == DraftStatus.CONFIRMED

    text = payer_copy(anon_client, token, "en", tmp_path)
    assert "Receipt" in text
    assert re.search(rf"^\s*{re.escape(usdc(draft, received))}\s*$", text, re.M)  # the amount paid, big
    received_eur = (Decimal(received).scaleb(-6) * draft.rate).quantize(Decimal("0.01"))
    assert f"≈ €{received_eur}" in text and "≈ €25.00" not in text
    assert f"Accepted as payment in full (the request was for {usdc(draft, draft.amount_base_units)})." in text


def test_a_reverted_payment_leaves_the_payment_request_again(chosen, anon_client, tmp_path):
    from drafts.services import PaymentObservation, draft_payment_apply

    token, draft = chosen
    pay(str(draft.id), confirmations=draft.required_confirmations, tx_id=TX)
    draft_payment_apply(
        draft_id=draft.id, observation=PaymentObservation(tx_id=TX, received_base_units=0, vanished=True)
    )

    text = payer_copy(anon_client, token, "en", tmp_path)

    assert "Payment draft" in text and "Receipt" not in text


def test_a_link_without_a_chosen_draft_or_an_unknown_token_has_no_document(create_link, anon_client):
    link = create_link()

    assert anon_client.get(f"/pay/{link['token']}/document").status_code == 404
    assert anon_client.get(f"/pay/{'n' * 43}/document").status_code == 404

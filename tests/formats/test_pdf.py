"""The draft PDF is a real PDF that shows what the payer needs."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import UTC, datetime

import pytest
import zxingcpp
from PIL import Image

from drafts.pdf import render_draft_pdf
from payments.uris import bip21_uri

pytestmark = pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils (scripts/system-deps.sh test)")

RECEIVER = "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297"


def context(**overrides) -> dict:
    base = {
        "draft_id": "5d1c9b86-0000-4000-8000-000000000001",
        "amount": "0.01234567 BTC",
        "network": "Bitcoin",
        "receiver_address": RECEIVER,
        "fiat": "1,234.56 SEK",
        "payment_method": "Bitcoin transaction with a service fee output",
        "memo": "Invoice <42> & co",
        "fee_lines": [{"label": "Service fee (0.14%)", "amount": "0.00001729 BTC"}],
        "expires_at": datetime(2027, 1, 15, 9, 30, tzinfo=UTC),
        "created_at": datetime(2027, 1, 14, 9, 30, tzinfo=UTC),
        "payment_uri": bip21_uri(address=RECEIVER, amount_sats=1_234_567, label="Shop"),
    }
    return base | overrides


def pdf_text(pdf: bytes, tmp_path) -> str:
    path = tmp_path / "draft.pdf"
    path.write_bytes(pdf)
    subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True)
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True).stdout


def test_the_pdf_is_one_valid_page_with_amount_address_and_draft_id(tmp_path):
    pdf = render_draft_pdf(context())

    assert pdf.startswith(b"%PDF-")
    path = tmp_path / "draft.pdf"
    path.write_bytes(pdf)
    info = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True, text=True).stdout
    assert re.search(r"^Pages:\s+1$", info, re.M)
    text = pdf_text(pdf, tmp_path)
    assert "0.01234567 BTC" in text
    assert RECEIVER in text
    assert "5d1c9b86-0000-4000-8000-000000000001" in text
    assert "1,234.56 SEK" in text
    assert "Invoice <42> & co" in text  # escaped in HTML, shown as typed
    assert "0.00001729 BTC" in text
    assert "Jan 15, 2027, 9:30:00 AM UTC" in text


def test_the_payment_uri_is_printed_and_drawn_as_a_scannable_qr_code(tmp_path):
    pdf = render_draft_pdf(context())

    squeezed = re.sub(r"\s+", "", pdf_text(pdf, tmp_path))
    assert context()["payment_uri"] in squeezed
    assert b"/Subtype /Image" not in pdf  # the QR is vector (inline SVG), not a bitmap
    # Rasterise the page as a printer would and scan it.
    (tmp_path / "draft.pdf").write_bytes(pdf)
    subprocess.run(
        ["pdftoppm", "-r", "150", "-png", "-singlefile", str(tmp_path / "draft.pdf"), str(tmp_path / "page")],
        check=True,
    )
    scanned = [result.text for result in zxingcpp.read_barcodes(Image.open(tmp_path / "page.png"))]
    assert scanned == [context()["payment_uri"]]


def test_a_draft_without_payment_uri_or_optional_fields_still_renders(tmp_path):
    minimal = {k: context()[k] for k in ("draft_id", "amount", "network", "receiver_address")}

    text = pdf_text(render_draft_pdf(minimal), tmp_path)

    assert "0.01234567 BTC" in text
    assert "Scan with your wallet" not in text


def test_the_renderer_loads_no_external_resources(tmp_path):
    # A hostile memo cannot pull in a remote image: it is escaped, and fetches are refused anyway.
    text = pdf_text(render_draft_pdf(context(memo='<img src="http://127.0.0.1:9/x.png">')), tmp_path)

    assert '<img src="http://127.0.0.1:9/x.png">' in text


@pytest.mark.django_db
def test_an_account_without_a_zone_reads_utc_whatever_the_server_time_zone(tmp_path, settings, owner):

    from drafts.documents import draft_pdf
    from tests.factories import make_draft

    settings.TIME_ZONE = "America/New_York"
    draft = make_draft(owner, expires_at=datetime(2027, 1, 15, 9, 30, tzinfo=UTC))

    text = pdf_text(draft_pdf(draft), tmp_path)

    assert "Jan 15, 2027, 9:30:00" in text and "UTC" in text and "4:30" not in text


@pytest.mark.django_db
def test_a_drafts_pdf_reads_like_a_bill_of_the_merchant_in_the_accounts_zone(tmp_path, owner):
    """Not "25.000000000000000000 EUR at 0.851829600000000000", "Method SingleOutput",
    "Network Mainnet" or a bare UTC time: the fiat's own precision, display names, the
    account's time zone named, and who is paid with their support contact."""
    import io
    from decimal import Decimal

    from accounts.profiles import merchant_profile_update
    from drafts.documents import draft_pdf
    from tests.factories import make_draft

    logo = io.BytesIO()
    Image.new("RGB", (64, 64), (20, 90, 160)).save(logo, format="PNG")
    merchant_profile_update(
        user=owner,
        changes={
            "display_name": "Corner Coffee",
            "support_email": "help@corner.example",
            "time_zone": "Europe/Berlin",
        },
        logo=logo.getvalue(),
    )
    draft = make_draft(
        owner,
        network="Mainnet",
        currency="BTC",
        receiver_address=RECEIVER,
        amount_base_units=27_123,
        fiat_currency="EUR",
        fiat_amount=Decimal("25.000000000000000000"),
        rate=Decimal("92172.3456000000000000"),
        expires_at=datetime(2027, 1, 15, 9, 30, tzinfo=UTC),
    )

    pdf = draft_pdf(draft)
    text = pdf_text(pdf, tmp_path)

    assert re.search(r"≈ €25\.00 · 1\s+BTC = 92,172\.3\s+EUR", text) and "25.0000" not in text
    assert re.search(r"0\.00027123\s+BTC", text)
    assert re.search(r"Network\s+Bitcoin\b", text) and "Mainnet" not in text
    assert re.search(r"Method\s+One transfer", text) and "SingleOutput" not in text
    assert "Jan 15, 2027, 10:30:00" in text and "Europe/Berlin" in text and "9:30:00" not in text
    assert "Payment to Corner Coffee" in text and "help@corner.example" in text
    assert b"/Subtype /Image" in pdf  # the logo, embedded (nothing is fetched)

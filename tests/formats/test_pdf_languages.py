"""The draft PDF in the reader's language: its words translated, its amounts and times written
as that language writes them, and a font that has the script's glyphs embedded."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime

import pytest

from drafts.pdf import render_draft_pdf
from payments import formatting

pytestmark = pytest.mark.skipif(not shutil.which("pdffonts"), reason="poppler-utils (scripts/system-deps.sh test)")


def context(language: str) -> dict:
    return {
        "draft_id": "5d1c9b86-0000-4000-8000-000000000001",
        "amount": formatting.asset_amount("29.123456", "USDC", language),
        "network": "Ethereum",
        "receiver_address": "0x52908400098527886E0F7030069857D2E4169EE7",
        "fiat": formatting.fiat_amount("25", "EUR", language),
        "expires_at": datetime(2027, 1, 15, 9, 30, tzinfo=UTC),
        "zone": "Europe/Berlin",
    }


def fonts_and_text(pdf: bytes, tmp_path) -> tuple[str, str]:
    path = tmp_path / "draft.pdf"
    path.write_bytes(pdf)
    fonts = subprocess.run(["pdffonts", str(path)], check=True, capture_output=True, text=True).stdout
    text = subprocess.run(["pdftotext", str(path), "-"], check=True, capture_output=True, text=True).stdout
    return fonts, text


@pytest.mark.parametrize(
    ("language", "font", "words"),
    [
        ("ja", "IPAGothic", "支払い下書き"),
        ("zh-hans", "WenQuanYi", "付款草稿"),
        ("hi", "Lohit-Devanagari", "भुगतान ड्राफ़्ट"),
        ("ar", "DejaVu", "مسودة دفع"),
    ],
)
def test_each_script_is_drawn_with_a_font_that_has_it(tmp_path, language, font, words):
    fonts, text = fonts_and_text(render_draft_pdf(context(language), language=language), tmp_path)

    assert font in fonts
    assert words in text


def test_a_german_pdf_writes_amounts_and_times_the_german_way(tmp_path):
    _, text = fonts_and_text(render_draft_pdf(context("de"), language="de"), tmp_path)

    assert "Zahlungsentwurf" in text and "29,123456 USDC" in text and "25,00 €" in text
    assert "15.01.2027, 10:30:00 MEZ" in text  # the given zone, named

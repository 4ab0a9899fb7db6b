"""Amounts, rates and times as each language writes them (payments.formatting, Babel)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.utils import translation

from payments import formatting

NBSP = "\xa0"


@pytest.mark.parametrize(
    ("language", "amount", "currency", "expected"),
    [
        ("de", "19.99", "EUR", f"19,99{NBSP}€"),
        ("en", "19.99", "EUR", "€19.99"),
        ("fr", "1234.5", "EUR", f"1\u202f234,50{NBSP}€"),
        ("de", "1250000", "VND", f"1.250.000{NBSP}₫"),  # VND has no minor unit
        ("ja", "1500", "JPY", "￥1,500"),
        ("de", "1.5", "KWD", f"1,500{NBSP}KWD"),  # three minor units
        ("ar", "19.99", "EUR", f"\u200f١٩٫٩٩{NBSP}€"),  # Arabic-Indic digits and decimal sign
        ("hi", "1250000", "INR", "₹12,50,000.00"),  # Indian grouping
    ],
)
def test_a_fiat_amount_reads_as_its_language_writes_it(language, amount, currency, expected):
    assert formatting.fiat_amount(Decimal(amount), currency, language) == expected


def test_a_crypto_amount_keeps_every_digit_of_the_assets_precision():
    assert formatting.asset_amount("24.376357", "USDC", "de") == f"24,376357{NBSP}USDC"
    assert formatting.asset_amount("0.010000000000000000", "ETH", "en") == f"0.010000000000000000{NBSP}ETH"
    assert formatting.asset_amount("1234.00000001", "BTC", "fr") == f"1\u202f234,00000001{NBSP}BTC"
    # In Arabic the number and its code are isolated so the code stays after the number.
    assert formatting.asset_amount("24.376357", "USDC", "ar") == f"\u2067٢٤٫٣٧٦٣٥٧{NBSP}USDC\u2069"


def test_a_rate_shows_six_significant_digits_not_eighteen_decimals():
    assert formatting.rate(Decimal("0.851829600000000000"), "de") == "0,851830"
    assert formatting.rate(Decimal("91234.56789"), "en") == "91,234.6"


def test_a_time_is_shown_in_the_given_zone_with_the_zone_named():
    when = datetime(2026, 11, 25, 20, 27, 39, tzinfo=UTC)

    assert formatting.moment(when, "Europe/Berlin", "de") == "25.11.2026, 21:27:39 MEZ (Europe/Berlin)"
    assert formatting.moment(when, None, "en") == "Nov 25, 2026, 8:27:39\u202fPM UTC"
    assert formatting.moment(when, "Asia/Tokyo", "ja") == "2026/11/26 5:27:39 JST (Asia/Tokyo)"


def test_without_a_language_the_active_one_is_used():
    with translation.override("de"):
        german = formatting.fiat_amount(Decimal("19.99"), "EUR")
    with translation.override("en"):
        english = formatting.fiat_amount(Decimal("19.99"), "EUR")

    assert (german, english) == (f"19,99{NBSP}€", "€19.99")


def test_network_and_method_have_display_names():
    assert formatting.network_name("Mainnet") == "Bitcoin"
    assert formatting.network_name("BaseSepolia") == "Base Sepolia"
    with translation.override("de"):
        assert formatting.method_name("SingleOutput") == "Eine Überweisung"

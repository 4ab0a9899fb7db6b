from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from payments.quotes import base_units_to_fiat, fiat_to_base_units, quote_lock, sek_value
from payments.registry import all_assets, get_asset

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def test_a_quote_locks_the_rate_for_the_configured_window(settings):
    settings.QUOTE_LOCK_MINUTES = 15
    quote = quote_lock(asset=get_asset("BTC", "Mainnet"), fiat_currency="EUR", now=NOW)
    assert quote.rate == Decimal("114000") * Decimal("0.852")
    assert quote.expires_at - quote.locked_at == timedelta(minutes=15)
    body = quote.as_json()
    sources = body.pop("sources")
    assert body == {
        "rate": 97128,
        "fiatCurrency": "EUR",
        "asset": "BTC",
        "source": "snapshot 2025-10-01 (bundled, not live)",
        "live": False,
        "lockedAt": "2026-11-22T12:00:00Z",
        "expiresAt": "2026-11-22T12:15:00Z",
    }
    assert sources["live"] is False
    assert sources["crypto"]["rate"] == "114000" and sources["fx"]["rate"] == "0.852"
    assert quote.is_expired(NOW + timedelta(minutes=15))
    assert not quote.is_expired(NOW + timedelta(minutes=14))


def test_wrapped_btc_is_quoted_at_the_btc_price():
    quote = quote_lock(asset=get_asset("BTC", "Ethereum"), fiat_currency="USD", now=NOW)
    assert quote.rate == 114000 and quote.asset == "BTC"


def test_the_lock_window_is_a_setting(settings):
    settings.QUOTE_LOCK_MINUTES = 5
    quote = quote_lock(asset=get_asset("USDC", "Base"), fiat_currency="usd", now=NOW)
    assert quote.expires_at == NOW + timedelta(minutes=5)
    assert quote.fiat_currency == "USD"


@pytest.mark.parametrize(
    "fiat,rate,decimals,expected",
    [
        (Decimal("100"), Decimal("50000"), 8, 200_000),
        (Decimal("1"), Decimal("3"), 8, 33_333_333),  # 33333333.33 rounds down
        (Decimal("2"), Decimal("3"), 8, 66_666_667),  # 66666666.67 rounds up
        (Decimal("0.000000005"), Decimal("1"), 8, 1),  # exactly half a unit rounds up
        (Decimal("0.0000000049"), Decimal("1"), 8, 0),
        (Decimal("10.00"), Decimal("0.9998"), 6, 10_002_000),  # 10002000.40008 rounds down
    ],
)
def test_fiat_converts_to_base_units_half_up(fiat, rate, decimals, expected):
    assert fiat_to_base_units(fiat, rate, decimals) == expected


def test_base_units_convert_to_fiat_exactly():
    assert base_units_to_fiat(12345, Decimal("100000"), 8) == Decimal("12.345")


def test_the_sek_bookkeeping_value_rounds_to_ore():
    value = sek_value(asset=get_asset("BTC", "Mainnet"), base_units=12345)
    # 0.00012345 BTC x (114000 x 9.42 SEK) = 132.567... SEK
    assert value["amount"] == 132.57
    assert value["rate"] == 1073880
    assert "snapshot" in value["source"]
    assert value["at"].endswith("Z")


@given(
    fiat=st.decimals(min_value=Decimal("0.01"), max_value=Decimal("1000000"), places=2),
    rate=st.decimals(min_value=Decimal("0.01"), max_value=Decimal("100000000000"), places=8),
    asset=st.sampled_from(all_assets()),
)
def test_fiat_to_base_units_and_back_is_within_one_base_unit_for_every_asset(fiat, rate, asset):
    units = fiat_to_base_units(fiat, rate, asset.decimals)
    back = base_units_to_fiat(units, rate, asset.decimals)
    one_unit_in_fiat = rate / asset.unit
    assert abs(back - fiat) <= one_unit_in_fiat / 2
    assert units >= 0

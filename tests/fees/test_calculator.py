from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ImproperlyConfigured
from hypothesis import given
from hypothesis import strategies as st

from fees.calculator import fee_quote, fee_usd_for, is_dust
from payments.registry import get_asset

D = Decimal

SPEC_TIERS = [
    (D(10), D("0.49")),
    (D(50), D("0.39")),
    (D(100), D("0.29")),
    (D(500), D("0.19")),
    (D(2000), D("0.14")),
    (D(10000), D("0.09")),
    (D(50000), D("0.04")),
    (D(100000), D("0.02")),
]


@pytest.mark.parametrize("edge,percent", SPEC_TIERS)
def test_a_value_exactly_at_a_tier_edge_belongs_to_that_tier(edge, percent):
    got_percent, fee = fee_usd_for(edge)
    assert got_percent == percent
    assert fee == min(max(edge * percent / 100, D("0.01")), D(100))


@pytest.mark.parametrize("index", range(len(SPEC_TIERS) - 1))
def test_one_cent_above_an_edge_uses_the_next_tier(index):
    edge, _ = SPEC_TIERS[index]
    assert fee_usd_for(edge + D("0.01"))[0] == SPEC_TIERS[index + 1][1]


def test_above_the_last_bound_the_open_ended_tier_applies():
    assert fee_usd_for(D("100000.01"))[0] == D("0.01")
    assert fee_usd_for(D("10000000"))[0] == D("0.01")


@pytest.mark.parametrize(
    "usd,fee",
    [
        (D(0), D("0.01")),  # below the minimum
        (D("1"), D("0.01")),  # 0.0049 -> min
        (D("10"), D("0.049")),
        (D("100"), D("0.29")),
        (D("1000"), D("1.4")),
        (D("50000"), D("20")),
        (D("100000"), D("20")),
        (D("1000000"), D("100")),  # 0.01 % of 1M = 100, exactly the cap
        (D("5000000"), D("100")),  # capped
    ],
)
def test_the_fee_is_the_tier_percent_of_the_whole_amount_clamped(usd, fee):
    assert fee_usd_for(usd)[1] == fee


def test_a_negative_value_is_refused():
    with pytest.raises(ValueError):
        fee_usd_for(D("-1"))


@given(st.decimals(min_value=0, max_value=D("1e12"), places=2))
def test_the_fee_is_always_between_one_cent_and_one_hundred_dollars(usd):
    percent, fee = fee_usd_for(usd)
    assert D("0.01") <= fee <= D(100)
    assert percent in {p for _, p in SPEC_TIERS} | {D("0.01")}


@given(st.decimals(min_value=D("0.01"), max_value=D("1e9"), places=2))
def test_the_fee_never_exceeds_the_tier_percent_unless_lifted_to_the_minimum(usd):
    percent, fee = fee_usd_for(usd)
    assert fee <= max(usd * percent / 100 + D("0.000000005"), D("0.01"))


def test_the_fee_converts_to_the_asset_rounding_up_and_shows_in_fiat():
    asset = get_asset("BTC", "Mainnet")
    quote = fee_quote(usd_value=D("1000"), asset=asset, usd_rate=D("60000"), fiat_currency="EUR", fiat_rate=D("55000"))
    # 1.4 USD / 60000 USD/BTC = 0.0000233333.. BTC -> 2333.33 sats -> 2334 (up)
    assert quote.percent == D("0.14")
    assert quote.fee_usd == D("1.4")
    assert quote.fee_base_units == 2334
    assert quote.fee_amount == "0.00002334"
    assert quote.fee_fiat == D("1.2833")  # 1.4 x 55000 / 60000
    assert quote.currency == "BTC"
    assert quote.as_json("Output") == {
        "percent": 0.14,
        "feeUsd": 1.4,
        "feeFiat": 1.2833,
        "fiatCurrency": "EUR",
        "feeBaseUnits": 2334,
        "feeAmount": "0.00002334",
        "currency": "BTC",
        "placement": "Output",
        "accrued": False,
        "waived": False,
    }
    assert quote.as_json("Accrued")["accrued"] is True
    assert quote.as_json("Waived")["waived"] is True
    with pytest.raises(ValueError):
        quote.as_json("Somewhere")


def test_an_exact_conversion_is_not_rounded_up_further():
    quote = fee_quote(
        usd_value=D("1000"), asset=get_asset("USDC", "Base"), usd_rate=D("1"), fiat_currency="USD", fiat_rate=D("1")
    )
    assert quote.fee_base_units == 1_400_000
    assert quote.fee_amount == "1.400000"


@given(
    usd=st.decimals(min_value=0, max_value=D("1e8"), places=2),
    usd_rate=st.decimals(min_value=D("0.5"), max_value=D("500000"), places=4),
    currency_network=st.sampled_from([("BTC", "Mainnet"), ("ETH", "Base"), ("USDT", "Solana"), ("SOL", "Solana")]),
)
def test_the_asset_fee_covers_the_usd_fee_by_less_than_one_base_unit(usd, usd_rate, currency_network):
    asset = get_asset(*currency_network)
    quote = fee_quote(usd_value=usd, asset=asset, usd_rate=usd_rate, fiat_currency="USD", fiat_rate=usd_rate)
    paid_usd = D(quote.fee_base_units) * usd_rate / asset.unit
    assert paid_usd >= quote.fee_usd
    assert paid_usd - quote.fee_usd < usd_rate / asset.unit


def test_dust_is_a_bitcoin_on_chain_notion(settings):
    settings.FEE_DUST_LIMIT_SATS = 546
    assert is_dust(asset=get_asset("BTC", "Mainnet"), fee_base_units=545)
    assert not is_dust(asset=get_asset("BTC", "Mainnet"), fee_base_units=546)
    assert is_dust(asset=get_asset("BTC", "Testnet"), fee_base_units=1)
    assert not is_dust(asset=get_asset("BTC", "Ethereum"), fee_base_units=1)


def test_tiers_come_from_settings(settings):
    settings.FEE_TIERS = [{"upToUsd": 100, "percent": "1"}, {"upToUsd": None, "percent": "0.5"}]
    assert fee_usd_for(D("100")) == (D("1"), D("1"))
    assert fee_usd_for(D("200")) == (D("0.5"), D("1"))


@pytest.mark.parametrize(
    "tiers",
    [
        [],
        [{"upToUsd": 10, "percent": "1"}],  # no open-ended tier
        [{"upToUsd": 50, "percent": "1"}, {"upToUsd": 10, "percent": "1"}, {"upToUsd": None, "percent": "1"}],
        [{"upToUsd": 10, "percent": 0.5}, {"upToUsd": None, "percent": "1"}],  # a float
        [{"upToUsd": 10, "percent": "-1"}, {"upToUsd": None, "percent": "1"}],
        [{"upTo": 10, "percent": "1"}, {"upToUsd": None, "percent": "1"}],
    ],
)
def test_a_malformed_tier_setting_fails_loudly(settings, tiers):
    settings.FEE_TIERS = tiers
    with pytest.raises(ImproperlyConfigured):
        fee_usd_for(D(1))

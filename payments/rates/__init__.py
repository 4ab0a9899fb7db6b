"""Rate feed: crypto prices in USD and USD -> fiat, behind pluggable providers."""

from payments.rates.feed import (
    Rate,
    RatesUnavailable,
    UnknownAsset,
    UnknownFiatCurrency,
    get_rate,
    normalise_asset,
    normalise_fiat,
    refresh_rates,
)
from payments.rates.fiat import FIAT_CURRENCIES
from payments.rates.providers import CRYPTO_ASSETS

__all__ = [
    "CRYPTO_ASSETS",
    "FIAT_CURRENCIES",
    "Rate",
    "RatesUnavailable",
    "UnknownAsset",
    "UnknownFiatCurrency",
    "get_rate",
    "normalise_asset",
    "normalise_fiat",
    "refresh_rates",
]

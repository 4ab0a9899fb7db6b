"""How money, networks, methods and times read in PDFs and emails (English), and the explorer links."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from payments.explorers import explorer_tx_url
from payments.formatting import fiat_amount, method_name, moment, network_name, rate_text

NBSP = "\xa0"


def test_fiat_amounts_keep_the_currencys_own_minor_units():
    assert fiat_amount(Decimal("25.000000000000000000"), "EUR", "en") == "€25.00"
    assert fiat_amount("19.9", "EUR", "en") == "€19.90"
    assert fiat_amount(1250000, "VND", "en") == "₫1,250,000"
    assert fiat_amount(Decimal("2500"), "JPY", "en") == "¥2,500"
    assert fiat_amount("1.5", "KWD", "en") == f"KWD{NBSP}1.500"


def test_a_rate_reads_at_six_significant_digits():
    assert rate_text(Decimal("0.851829600000000000"), "USDC", "EUR", "en") == f"1{NBSP}USDC = 0.851830{NBSP}EUR"
    assert rate_text(Decimal("92172.3456"), "BTC", "EUR", "en") == f"1{NBSP}BTC = 92,172.3{NBSP}EUR"


def test_networks_and_methods_go_by_their_display_names():
    assert network_name("Mainnet") == "Bitcoin" and network_name("BaseSepolia") == "Base Sepolia"
    assert method_name("SingleOutput") == "One transfer" and method_name("Lightning") == "Lightning invoice"
    assert network_name(None) == "" and method_name("") == ""


def test_a_time_is_shown_in_the_accounts_zone_and_names_it():
    winter = datetime(2026, 11, 25, 20, 27, 39, tzinfo=UTC)
    summer = "2026-07-01T10:00:00Z"
    assert moment(winter, "Europe/Berlin", "de") == "25.11.2026, 21:27:39 MEZ (Europe/Berlin)"
    assert moment(summer, "Europe/Berlin", "de") == "01.07.2026, 12:00:00 MESZ (Europe/Berlin)"
    assert moment(winter, "Asia/Kolkata", "en").startswith("Nov 26, 2026, 1:57:39")
    assert moment(winter, "Asia/Kolkata", "en").endswith("(Asia/Kolkata)") or "Asia/Kolkata" in moment(
        winter, "Asia/Kolkata", "en"
    )
    assert moment(winter, "UTC", "en") == "Nov 25, 2026, 8:27:39\u202fPM UTC"
    assert moment(None) == ""


def test_explorer_links_follow_the_settings_and_skip_lightning(settings):
    assert explorer_tx_url(network="Mainnet", txid="ab" * 32) == f"https://mempool.space/tx/{'ab' * 32}"
    assert explorer_tx_url(network="SolanaDevnet", txid="5x").endswith("/tx/5x?cluster=devnet")
    assert explorer_tx_url(network="Mainnet", txid="ab", method="Lightning") is None
    assert explorer_tx_url(network="Regtest", txid="ab") is None
    settings.BLOCK_EXPLORER_URLS = {"Mainnet": "https://btc.example/tx/{txid}", "Base": ""}
    assert explorer_tx_url(network="Mainnet", txid="a/b") == "https://btc.example/tx/a%2Fb"
    assert explorer_tx_url(network="Base", txid="0xab") is None

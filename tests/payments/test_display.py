"""How money, networks, methods and times read in PDFs and emails, and the explorer links."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from payments.display import fiat_text, method_name, network_name, rate_text, time_text
from payments.explorers import explorer_tx_url


def test_fiat_amounts_keep_the_currencys_own_minor_units():
    assert fiat_text(Decimal("25.000000000000000000"), "EUR") == "25.00 EUR"
    assert fiat_text("19.9", "EUR") == "19.90 EUR"
    assert fiat_text(1250000, "VND") == "1,250,000 VND"
    assert fiat_text(Decimal("2500"), "JPY") == "2,500 JPY"
    assert fiat_text("1.5", "KWD") == "1.500 KWD"


def test_a_rate_reads_at_six_significant_digits():
    assert rate_text(Decimal("0.851829600000000000")) == "0.851830"
    assert rate_text(Decimal("92172.3456")) == "92,172.3"


def test_networks_and_methods_go_by_their_display_names():
    assert network_name("Mainnet") == "Bitcoin" and network_name("BaseSepolia") == "Base Sepolia"
    assert method_name("SingleOutput") == "Single transfer" and method_name("Lightning") == "Lightning invoice"


def test_a_time_is_shown_in_the_accounts_zone_and_names_it():
    winter = datetime(2026, 11, 25, 20, 27, 39, tzinfo=UTC)
    summer = "2026-07-01T10:00:00Z"
    assert time_text(winter, "Europe/Berlin") == "2026-11-25 21:27 CET (Europe/Berlin)"
    assert time_text(summer, "Europe/Berlin") == "2026-07-01 12:00 CEST (Europe/Berlin)"
    assert time_text(winter, "Asia/Kolkata") == "2026-11-26 01:57 IST (Asia/Kolkata)"
    assert time_text(winter, "UTC") == "2026-11-25 20:27 UTC"


def test_explorer_links_follow_the_settings_and_skip_lightning(settings):
    assert explorer_tx_url(network="Mainnet", txid="ab" * 32) == f"https://mempool.space/tx/{'ab' * 32}"
    assert explorer_tx_url(network="SolanaDevnet", txid="5x").endswith("/tx/5x?cluster=devnet")
    assert explorer_tx_url(network="Mainnet", txid="ab", method="Lightning") is None
    assert explorer_tx_url(network="Regtest", txid="ab") is None
    settings.BLOCK_EXPLORER_URLS = {"Mainnet": "https://btc.example/tx/{txid}", "Base": ""}
    assert explorer_tx_url(network="Mainnet", txid="a/b") == "https://btc.example/tx/a%2Fb"
    assert explorer_tx_url(network="Base", txid="0xab") is None

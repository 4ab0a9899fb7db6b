"""The spec's enumerations, spelled exactly as the JSON API shows them."""

from django.db import models
from django.utils.translation import gettext_lazy, pgettext_lazy


class Network(models.TextChoices):
    MAINNET = "Mainnet", "Bitcoin"
    SOLANA = "Solana", "Solana"
    ETHEREUM = "Ethereum", "Ethereum"
    BASE = "Base", "Base"
    TESTNET = "Testnet", "Bitcoin testnet4"
    SOLANA_DEVNET = "SolanaDevnet", "Solana devnet"
    SEPOLIA = "Sepolia", "Ethereum Sepolia"
    BASE_SEPOLIA = "BaseSepolia", "Base Sepolia"
    # Bitcoin test chains a developer runs or joins; off unless ENABLED_NETWORKS names them.
    SIGNET = "Signet", "Bitcoin signet"
    REGTEST = "Regtest", "Bitcoin regtest"


class Currency(models.TextChoices):
    BTC = "BTC"
    USDC = "USDC"
    USDT = "USDT"
    EURC = "EURC"
    SOL = "SOL"
    ETH = "ETH"


class Method(models.TextChoices):
    MULTI_OUTPUT = "MultiOutput", gettext_lazy("Bitcoin PSBT template with fee output")
    SINGLE_OUTPUT = "SingleOutput", gettext_lazy("One transfer, QR URI, fee accrues")
    LIGHTNING = "Lightning", gettext_lazy("BOLT11 invoice")


class FeePlacement(models.TextChoices):
    OUTPUT = "Output", pgettext_lazy("status", "Output")
    ACCRUED = "Accrued", pgettext_lazy("status", "Accrued")
    WAIVED = "Waived", pgettext_lazy("status", "Waived")

"""The spec's enumerations, spelled exactly as the JSON API shows them."""

from django.db import models


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
    MULTI_OUTPUT = "MultiOutput", "Bitcoin PSBT template with fee output"
    SINGLE_OUTPUT = "SingleOutput", "One transfer, QR URI, fee accrues"
    LIGHTNING = "Lightning", "BOLT11 invoice"


class FeePlacement(models.TextChoices):
    OUTPUT = "Output"
    ACCRUED = "Accrued"
    WAIVED = "Waived"

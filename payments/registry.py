"""The currency x network matrix: the one place that knows which asset lives where.

Every other part of the service asks this module (kind, token address, base-unit
decimals, payment methods, chain id, confirmations, enabled networks); no part
repeats the matrix.

Token addresses (mainnet defaults, from the issuers' own documentation):

- USDC: Circle, "USDC Contract Addresses",
  https://developers.circle.com/stablecoins/usdc-contract-addresses
  (testnet section for Sepolia, Base Sepolia and Solana Devnet).
- EURC: Circle, "EURC Contract Addresses",
  https://developers.circle.com/stablecoins/eurc-contract-addresses
  (testnet section for Sepolia, Base Sepolia and Solana Devnet).
- USDT: Tether, "Supported protocols", https://tether.to/en/supported-protocols/
  (Tether publishes no testnet deployment: USDT on test networks needs TOKEN_ADDRESSES).
- WBTC on Ethereum: BitGo's WBTC, https://wbtc.network (contract listed in "Dashboard"),
  token page https://etherscan.io/token/0x2260fac5e5542a773aa44fbcfedf7c193bc2c599.
- Wrapped BTC on Solana: Coinbase cbBTC, https://www.coinbase.com/cbbtc (Solana mint
  listed there and at https://solscan.io/token/cbbtcf3aa214zXHbiAZQwf4122FBYbraNdFqgw4iMij).
  No issuer testnet deployment: wrapped BTC on test networks needs TOKEN_ADDRESSES.

The setting TOKEN_ADDRESSES ({"USDC": {"Ethereum": "0x..."}}) overrides any entry,
e.g. with a test token deployed on a local node.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Literal

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from core.problems import Problem
from payments.enums import Currency, Method, Network

Family = Literal["bitcoin", "evm", "solana"]
Kind = Literal["native", "token"]


@dataclass(frozen=True)
class NetworkInfo:
    network: Network
    family: Family
    chain_id: int | None
    default_confirmations: int
    is_testnet: bool
    mainnet: Network  # the mainnet this network mirrors (itself for a mainnet)


# Solana counts a payment as confirmed at "finalized" commitment; 1 stands for that.
NETWORKS: dict[str, NetworkInfo] = {  # keyed by Network, looked up by its text
    info.network: info
    for info in (
        NetworkInfo(Network.MAINNET, "bitcoin", None, 2, False, Network.MAINNET),
        NetworkInfo(Network.TESTNET, "bitcoin", None, 2, True, Network.MAINNET),
        NetworkInfo(Network.SIGNET, "bitcoin", None, 2, True, Network.MAINNET),
        NetworkInfo(Network.REGTEST, "bitcoin", None, 2, True, Network.MAINNET),
        NetworkInfo(Network.SOLANA, "solana", None, 1, False, Network.SOLANA),
        NetworkInfo(Network.SOLANA_DEVNET, "solana", None, 1, True, Network.SOLANA),
        NetworkInfo(Network.ETHEREUM, "evm", 1, 12, False, Network.ETHEREUM),
        NetworkInfo(Network.SEPOLIA, "evm", 11155111, 12, True, Network.ETHEREUM),
        NetworkInfo(Network.BASE, "evm", 8453, 12, False, Network.BASE),
        NetworkInfo(Network.BASE_SEPOLIA, "evm", 84532, 12, True, Network.BASE),
    )
}


@dataclass(frozen=True)
class _Entry:
    currency: Currency
    network: Network
    kind: Kind
    decimals: int
    price_currency: Currency
    token_address: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.currency.value, self.network.value)


_BTC_METHODS = (Method.MULTI_OUTPUT, Method.SINGLE_OUTPUT, Method.LIGHTNING)
_SINGLE = (Method.SINGLE_OUTPUT,)

# Base units: BTC and wrapped BTC 8 decimals; USDC, USDT, EURC 6; SOL 9 (lamports);
# ETH 9 (gwei: the spec counts ETH in gwei; on chain 1 gwei = 10**9 wei).
_C, _N = Currency, Network
_ENTRIES: tuple[_Entry, ...] = (
    # Bitcoin
    _Entry(_C.BTC, _N.MAINNET, "native", 8, _C.BTC),
    _Entry(_C.BTC, _N.TESTNET, "native", 8, _C.BTC),
    _Entry(_C.BTC, _N.SIGNET, "native", 8, _C.BTC),
    _Entry(_C.BTC, _N.REGTEST, "native", 8, _C.BTC),
    # Native coins of Solana and the EVM networks
    _Entry(_C.SOL, _N.SOLANA, "native", 9, _C.SOL),
    _Entry(_C.SOL, _N.SOLANA_DEVNET, "native", 9, _C.SOL),
    _Entry(_C.ETH, _N.ETHEREUM, "native", 9, _C.ETH),
    _Entry(_C.ETH, _N.SEPOLIA, "native", 9, _C.ETH),
    _Entry(_C.ETH, _N.BASE, "native", 9, _C.ETH),
    _Entry(_C.ETH, _N.BASE_SEPOLIA, "native", 9, _C.ETH),
    # Wrapped BTC (priced as BTC)
    _Entry(_C.BTC, _N.SOLANA, "token", 8, _C.BTC, "cbbtcf3aa214zXHbiAZQwf4122FBYbraNdFqgw4iMij"),
    _Entry(_C.BTC, _N.SOLANA_DEVNET, "token", 8, _C.BTC),
    _Entry(_C.BTC, _N.ETHEREUM, "token", 8, _C.BTC, "0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599"),
    _Entry(_C.BTC, _N.SEPOLIA, "token", 8, _C.BTC),
    # USDC (Circle)
    _Entry(_C.USDC, _N.SOLANA, "token", 6, _C.USDC, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
    _Entry(_C.USDC, _N.SOLANA_DEVNET, "token", 6, _C.USDC, "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"),
    _Entry(_C.USDC, _N.ETHEREUM, "token", 6, _C.USDC, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"),
    _Entry(_C.USDC, _N.SEPOLIA, "token", 6, _C.USDC, "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"),
    _Entry(_C.USDC, _N.BASE, "token", 6, _C.USDC, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
    _Entry(_C.USDC, _N.BASE_SEPOLIA, "token", 6, _C.USDC, "0x036CbD53842c5426634e7929541eC2318f3dCF7e"),
    # USDT (Tether)
    _Entry(_C.USDT, _N.SOLANA, "token", 6, _C.USDT, "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"),
    _Entry(_C.USDT, _N.SOLANA_DEVNET, "token", 6, _C.USDT),
    _Entry(_C.USDT, _N.ETHEREUM, "token", 6, _C.USDT, "0xdAC17F958D2ee523a2206206994597C13D831ec7"),
    _Entry(_C.USDT, _N.SEPOLIA, "token", 6, _C.USDT),
    # EURC (Circle)
    _Entry(_C.EURC, _N.SOLANA, "token", 6, _C.EURC, "HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr"),
    _Entry(_C.EURC, _N.SOLANA_DEVNET, "token", 6, _C.EURC, "HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr"),
    _Entry(_C.EURC, _N.ETHEREUM, "token", 6, _C.EURC, "0x1aBaEA1f7C830bD89Acc67eC4af516284b1bC33c"),
    _Entry(_C.EURC, _N.SEPOLIA, "token", 6, _C.EURC, "0x08210F9170F89Ab7658F0B5E3fF39b0E03C594D4"),
    _Entry(_C.EURC, _N.BASE, "token", 6, _C.EURC, "0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42"),
    _Entry(_C.EURC, _N.BASE_SEPOLIA, "token", 6, _C.EURC, "0x808456652fdb597867f38412077A9182bf77359F"),
)


@dataclass(frozen=True)
class Asset:
    currency: Currency
    network: Network
    kind: Kind
    token_address: str | None
    decimals: int
    methods: tuple[Method, ...]
    family: Family
    chain_id: int | None
    default_confirmations: int
    price_currency: Currency
    is_testnet: bool

    @property
    def unit(self) -> int:
        """Base units in one whole unit of the asset."""
        return int(10**self.decimals)

    @property
    def max_base_units(self) -> int:
        """The largest amount one draft may bill: more than the asset's supply is no real payment."""
        return MAX_WHOLE_UNITS[self.currency] * self.unit


# Upper bounds of one payment, in whole units (decisions: no amount above the asset's plausible
# supply). BTC: the 21 million cap. ETH and SOL: several times today's supply. Stablecoins:
# a trillion, well above any issuer's circulation. Every bound stays below 2**63 base units.
MAX_WHOLE_UNITS: dict[str, int] = {
    "BTC": 21_000_000,
    "ETH": 1_000_000_000,
    "SOL": 5_000_000_000,
    "USDC": 1_000_000_000_000,
    "USDT": 1_000_000_000_000,
    "EURC": 1_000_000_000_000,
}


class UnsupportedCombination(Problem):
    default_code = "unsupported_combination"
    default_detail = "This currency is not supported on this network."


class NetworkDisabled(Problem):
    default_code = "network_disabled"
    default_detail = "This network is not enabled on this deployment."


class InvalidAmount(Problem):
    default_code = "invalid_amount"
    default_detail = "The amount is not valid for this asset."


def _token_overrides() -> dict[tuple[str, str], str]:
    raw = getattr(settings, "TOKEN_ADDRESSES", {}) or {}
    found: dict[tuple[str, str], str] = {}
    for currency, per_network in raw.items():
        for network, address in per_network.items():
            found[(currency, network)] = address
    return found


def _build(entry: _Entry, token_address: str | None) -> Asset:
    info = NETWORKS[entry.network]
    on_bitcoin = info.family == "bitcoin"
    return Asset(
        currency=entry.currency,
        network=entry.network,
        kind=entry.kind,
        token_address=token_address,
        decimals=entry.decimals,
        methods=_BTC_METHODS if on_bitcoin else _SINGLE,
        family=info.family,
        chain_id=info.chain_id,
        default_confirmations=info.default_confirmations,
        price_currency=entry.price_currency,
        is_testnet=info.is_testnet,
    )


@cache
def _matrix(overrides_key: tuple[tuple[tuple[str, str], str], ...]) -> dict[tuple[str, str], Asset | None]:
    """(currency, network) -> Asset, or None where the combination exists but no token is configured."""
    from payments.addresses import AddressError, check_address

    overrides = dict(overrides_key)
    stray = set(overrides) - {e.key for e in _ENTRIES if e.kind == "token"}
    if stray:
        raise ImproperlyConfigured(f"TOKEN_ADDRESSES names combinations that take no token address: {sorted(stray)}")
    matrix: dict[tuple[str, str], Asset | None] = {}
    for entry in _ENTRIES:
        address = overrides.get(entry.key, entry.token_address)
        if address is not None:
            try:
                address = check_address(entry.network, address)
            except AddressError as exc:
                source = "TOKEN_ADDRESSES" if entry.key in overrides else "The registry's"
                raise ImproperlyConfigured(
                    f"{source}: the token address for {entry.currency} on {entry.network} is invalid: {exc}"
                ) from exc
        matrix[entry.key] = None if entry.kind == "token" and address is None else _build(entry, address)
    return matrix


def _current_matrix() -> dict[tuple[str, str], Asset | None]:
    return _matrix(tuple(sorted(_token_overrides().items())))


def get_asset(currency: str, network: str) -> Asset:
    """The asset for a (currency, network) pair, or a 400 ``unsupported_combination``."""
    asset = _current_matrix().get((str(currency), str(network)))
    if asset is None:
        supported = sorted(n for (c, n), a in _current_matrix().items() if c == str(currency) and a is not None)
        detail = f"{currency} is not supported on {network}."
        if supported:
            detail += f" Supported networks for {currency}: {', '.join(supported)}."
        raise UnsupportedCombination(
            detail,
            errors=[
                {"field": "currency", "code": "unsupported_combination", "message": detail},
                {"field": "network", "code": "unsupported_combination", "message": detail},
            ],
        )
    return asset


def all_assets() -> list[Asset]:
    """Every usable asset (token combinations without a configured address are left out)."""
    return [asset for asset in _current_matrix().values() if asset is not None]


def token_slots(network: str) -> list[tuple[str, int]]:
    """(currency, decimals) of every token the matrix has on `network`, configured or not (a local
    test chain deploys one contract per slot and names them in TOKEN_ADDRESSES)."""
    return [(e.currency.value, e.decimals) for e in _ENTRIES if e.network == network and e.kind == "token"]


def enabled_networks() -> list[Network]:
    return [Network(name) for name in settings.ENABLED_NETWORKS]


def require_network_enabled(network: str) -> None:
    if str(network) not in settings.ENABLED_NETWORKS:
        raise NetworkDisabled(
            f"The network {network} is not enabled on this deployment. "
            f"Enabled: {', '.join(settings.ENABLED_NETWORKS)}.",
            field="network",
        )


def network_info(network: str) -> NetworkInfo:
    return NETWORKS[Network(network)]


def default_method(asset: Asset) -> Method:
    """MultiOutput for on-chain BTC on Mainnet/Testnet, SingleOutput everywhere else."""
    if Method.MULTI_OUTPUT in asset.methods:
        return Method.MULTI_OUTPUT
    return Method.SINGLE_OUTPUT


def format_amount(base_units: int, asset: Asset) -> str:
    """Exact decimal string of a base-unit amount: 12345 sats -> "0.00012345"."""
    if isinstance(base_units, bool) or not isinstance(base_units, int):
        raise TypeError("base_units must be an int")
    sign = "-" if base_units < 0 else ""
    whole, frac = divmod(abs(base_units), asset.unit)
    if asset.decimals == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{frac:0{asset.decimals}d}"


def to_base_units(amount: Decimal, asset: Asset) -> int:
    """Whole-unit Decimal -> integer base units; more precision than the asset has is a 400."""
    try:
        amount = Decimal(amount)
    except (InvalidOperation, TypeError, ValueError) as exc:
        raise InvalidAmount("The amount is not a number.", field="amount") from exc
    if not amount.is_finite():
        raise InvalidAmount("The amount is not a finite number.", field="amount")
    scaled = amount.scaleb(asset.decimals)
    if scaled != scaled.to_integral_value():
        raise InvalidAmount(
            f"{asset.currency} has {asset.decimals} decimals; {amount} is more precise than that.", field="amount"
        )
    return int(scaled)

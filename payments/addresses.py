"""Receiver and sender address validation per network, with real checksums.

Bitcoin: python-bitcointx under the network's chain parameters, so a mainnet
address on Testnet (and the reverse) is refused; only P2PKH, P2SH, P2WPKH, P2WSH
and P2TR are accepted. Solana: solders' base58 32-byte public keys. EVM: 20-byte
hex; a mixed-case address must carry a valid EIP-55 checksum.
"""

from __future__ import annotations

import functools
import re

from bitcointx import ChainParams
from bitcointx.wallet import (
    CCoinAddress,
    CCoinAddressError,
    P2PKHCoinAddress,
    P2SHCoinAddress,
    P2TRCoinAddress,
    P2WPKHCoinAddress,
    P2WSHCoinAddress,
)
from django.utils.translation import gettext_noop
from eth_utils import to_checksum_address
from solders.pubkey import Pubkey

from core.problems import Problem, worded
from payments.enums import Network
from payments.registry import Asset

# Longest valid form is a 62-character bech32 P2WSH/P2TR address; anything much
# longer is refused before any decoding work.
MAX_ADDRESS_LENGTH = 100

# Signet shares testnet's encodings (tb1, m/n, 2); regtest has its own bech32 prefix, bcrt1.
_BITCOIN_CHAINS = {
    Network.MAINNET: "bitcoin",
    Network.TESTNET: "bitcoin/testnet",
    Network.SIGNET: "bitcoin/signet",
    Network.REGTEST: "bitcoin/regtest",
}
_BITCOIN_TYPES = (P2PKHCoinAddress, P2SHCoinAddress, P2WPKHCoinAddress, P2WSHCoinAddress, P2TRCoinAddress)
_EVM_NETWORKS = {Network.ETHEREUM, Network.SEPOLIA, Network.BASE, Network.BASE_SEPOLIA}
_SOLANA_NETWORKS = {Network.SOLANA, Network.SOLANA_DEVNET}
_EVM_HEX = re.compile(r"0x[0-9a-fA-F]{40}")
_EVM_ZERO = "0x" + "0" * 40


class AddressError(ValueError):
    """Why an address is not valid on a network (message fit for an API client)."""


class InvalidAddress(Problem):
    default_code = "invalid_address"
    default_detail = "The address is not valid on this network."


def _check_bitcoin(network: Network, address: str) -> str:
    with ChainParams(_BITCOIN_CHAINS[network]):
        try:
            parsed = CCoinAddress(address)
        except (CCoinAddressError, ValueError) as exc:
            for other in (Network.MAINNET, Network.TESTNET, Network.REGTEST):
                if other == network or _BITCOIN_CHAINS[network] == "bitcoin/signet" and other == Network.TESTNET:
                    continue
                with ChainParams(_BITCOIN_CHAINS[other]):
                    try:
                        CCoinAddress(address)
                    except (CCoinAddressError, ValueError):
                        continue
                raise AddressError(
                    worded(
                        gettext_noop("This is a %(other)s address, not a %(network)s address."),
                        other=other.label,
                        network=network.label,
                    )
                ) from exc
            raise AddressError(
                worded(
                    gettext_noop("Not a valid %(network)s address (bad encoding or checksum)."), network=network.label
                )
            ) from exc
        if not isinstance(parsed, _BITCOIN_TYPES):
            raise AddressError(
                worded(
                    gettext_noop("Unsupported %(network)s address type; use P2PKH, P2SH, P2WPKH, P2WSH or P2TR."),
                    network=network.label,
                )
            )
        return str(parsed)


def _check_solana(network: Network, address: str) -> str:
    try:
        key = Pubkey.from_string(address)
    except (ValueError, TypeError) as exc:
        raise AddressError(
            worded(
                gettext_noop("Not a valid %(network)s address (base58 32-byte public key expected)."),
                network=network.label,
            )
        ) from exc
    if str(key) != address:
        raise AddressError(
            worded(gettext_noop("Not a valid %(network)s address (non-canonical base58)."), network=network.label)
        )
    return address


@functools.lru_cache(maxsize=4096)
def _eip55(address: str) -> str:
    """The EIP-55 form of a lower-case address (a Keccak hash: merchants reuse a few receivers)."""
    return to_checksum_address(address)


def _check_evm(network: Network, address: str) -> str:
    if not _EVM_HEX.fullmatch(address):
        raise AddressError(
            worded(
                gettext_noop("Not a valid %(network)s address (0x followed by 40 hex digits expected)."),
                network=network.label,
            )
        )
    digits = address[2:]
    checksummed = _eip55(address.lower())
    if digits != digits.lower() and digits != digits.upper() and address != checksummed:
        raise AddressError(
            worded(gettext_noop("Not a valid %(network)s address (EIP-55 checksum mismatch)."), network=network.label)
        )
    if checksummed == _EVM_ZERO:
        raise AddressError(worded(gettext_noop("The zero address burns whatever is sent to it.")))
    return checksummed


def check_address(network: str, address: str) -> str:
    """The normalised address, or AddressError saying why not (no HTTP concerns)."""
    try:
        net = Network(network)
    except ValueError as exc:
        raise AddressError(f"Unknown network {network!r}.") from exc
    if not isinstance(address, str) or not address:
        raise AddressError(worded(gettext_noop("An address on %(network)s is required."), network=net.label))
    if len(address) > MAX_ADDRESS_LENGTH:
        raise AddressError(worded(gettext_noop("Too long for an address on %(network)s."), network=net.label))
    if address != address.strip():
        raise AddressError(worded(gettext_noop("The address has surrounding whitespace.")))
    if net in _BITCOIN_CHAINS:
        return _check_bitcoin(net, address)
    if net in _SOLANA_NETWORKS:
        return _check_solana(net, address)
    if net in _EVM_NETWORKS:
        return _check_evm(net, address)
    raise AddressError(f"No address rules for {net.label}.")  # pragma: no cover - every Network is covered


def validate_address(network: str, address: str, *, field: str = "receiverAddress") -> str:
    """The normalised address (bech32 lower-cased, EVM in EIP-55 form), or a 400 ``invalid_address``."""
    try:
        return check_address(network, address)
    except AddressError as exc:
        named = Network(network).label if network in Network.values else network
        problem = exc.args[0] if exc.args else str(exc)
        # Said once: most reasons name the network already ("Not a valid Ethereum address (...)").
        message = (
            problem
            if named in str(problem)
            else worded(gettext_noop("%(problem)s (on %(network)s)"), problem=problem, network=named)
        )
        raise InvalidAddress(
            worded(gettext_noop("%(field)s: %(problem)s"), field=field, problem=message),
            errors=[{"field": field, "code": "invalid_address", "message": message}],
            extra={"network": str(network)},
        ) from exc


# --- Receivers that can never be paid --------------------------------------------------------

# Bitcoin Core refuses to relay an output below this (546 sats is the P2PKH threshold at the
# default dust relay fee; segwit outputs have lower ones, so 546 is safe for every type).
BITCOIN_DUST_LIMIT_SATS = 546

# Solana programs, sysvars and the wrapped-SOL mint: accounts no wallet controls, so whatever
# is sent to them is lost (or the transfer fails).
SOLANA_PROGRAM_IDS = {
    "11111111111111111111111111111111": "the System Program",
    "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA": "the SPL Token Program",
    "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb": "the Token-2022 Program",
    "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL": "the Associated Token Account Program",
    "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr": "the Memo Program",
    "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo": "the Memo Program (v1)",
    "ComputeBudget111111111111111111111111111111": "the Compute Budget Program",
    "Stake11111111111111111111111111111111111111": "the Stake Program",
    "Vote111111111111111111111111111111111111111": "the Vote Program",
    "Config1111111111111111111111111111111111111": "the Config Program",
    "AddressLookupTab1e1111111111111111111111111": "the Address Lookup Table Program",
    "BPFLoader1111111111111111111111111111111111": "the BPF Loader",
    "BPFLoader2111111111111111111111111111111111": "the BPF Loader",
    "BPFLoaderUpgradeab1e11111111111111111111111": "the Upgradeable BPF Loader",
    "NativeLoader1111111111111111111111111111111": "the Native Loader",
    "Ed25519SigVerify111111111111111111111111111": "the Ed25519 signature program",
    "KeccakSecp256k11111111111111111111111111111": "the secp256k1 signature program",
    "SysvarRent111111111111111111111111111111111": "the Rent sysvar",
    "SysvarC1ock11111111111111111111111111111111": "the Clock sysvar",
    "Sysvar1nstructions1111111111111111111111111": "the Instructions sysvar",
    "SysvarRecentB1ockHashes11111111111111111111": "the Recent Blockhashes sysvar",
    "SysvarEpochSchedu1e111111111111111111111111": "the Epoch Schedule sysvar",
    "SysvarS1otHashes111111111111111111111111111": "the Slot Hashes sysvar",
    "SysvarStakeHistory1111111111111111111111111": "the Stake History sysvar",
    "SysvarFees111111111111111111111111111111111": "the Fees sysvar",
    "SysvarRewards111111111111111111111111111111": "the Rewards sysvar",
    "So11111111111111111111111111111111111111112": "the wrapped SOL mint",
}
# EVM precompiles live at the lowest addresses (0x01-0x11 on Ethereum, 0x100 on Base and other
# RIP-7212 chains); nothing sent there can be spent.
_EVM_RESERVED_BELOW = 0x200


def check_receivable(*, asset: Asset, address: str, amount_base_units: int, amount_field: str = "amountSats") -> None:
    """Refuse a receiver that can never be paid on chain, with a field error: a token contract or
    mint of the registry on that network (the asset's own included), a Solana program or
    sysvar, an EVM precompile, or a Bitcoin output below the dust limit. ``asset`` is the
    registry's Asset; ``address`` is already validated and normalised."""
    from payments.registry import all_assets

    def refuse(message: str, *, code: str = "unpayable_receiver", field: str = "receiverAddress") -> None:
        detail = worded(gettext_noop("%(field)s: %(problem)s"), field=field, problem=message)
        raise Problem(detail, code=code, errors=[{"field": field, "code": code, "message": message}])

    tokens = {a.token_address: a for a in all_assets() if a.network == asset.network and a.kind == "token"}
    if address in tokens:
        token = tokens[address]
        if asset.family == "solana":
            what = gettext_noop(
                "This is the %(currency)s token mint on %(network)s, not a wallet; payments to it are lost."
            )
        else:
            what = gettext_noop(
                "This is the %(currency)s token contract on %(network)s, not a wallet; payments to it are lost."
            )
        refuse(worded(what, currency=token.currency, network=Network(asset.network).label))
    if asset.family == "solana" and address in SOLANA_PROGRAM_IDS:
        refuse(
            worded(
                gettext_noop("This is %(program)s, not a wallet; payments to it are lost."),
                program=SOLANA_PROGRAM_IDS[address],
            )
        )
    if asset.family == "evm" and int(address, 16) < _EVM_RESERVED_BELOW:
        refuse(worded(gettext_noop("This is a reserved precompile address, not a wallet; payments to it are lost.")))
    if asset.family == "bitcoin" and amount_base_units < BITCOIN_DUST_LIMIT_SATS:
        refuse(
            worded(
                gettext_noop("A Bitcoin output below %(limit)s sats is dust: wallets and nodes refuse to send it."),
                limit=BITCOIN_DUST_LIMIT_SATS,
            ),
            code="amount_below_dust",
            field=amount_field,
        )

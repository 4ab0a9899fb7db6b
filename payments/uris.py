"""Payment URIs for QR codes and wallet links: BIP21, Solana Pay and EIP-681.

Callers pass already-validated addresses and exact amounts (integer base units or
Decimal whole units). Amounts are written as plain decimal strings: never a float,
never an exponent, because wallets parse them digit by digit and a rounding slip
here would bill the payer a different amount than the draft.
"""

from __future__ import annotations

import re
import secrets
from decimal import Decimal, InvalidOperation
from urllib.parse import quote

from solders.pubkey import Pubkey

SATS_PER_BTC_DECIMALS = 8
# Bitcoin addresses (base58 and bech32) are alphanumeric; anything else would
# break out of the URI's path part, so it is a caller bug, not a payer error.
_BITCOIN_ADDRESS = re.compile(r"[A-Za-z0-9]{14,90}")
_EVM_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")


def _encode(value: str) -> str:
    # RFC 3986 percent-encoding of UTF-8, spaces as %20 (not "+"): what BIP21,
    # Solana Pay and EIP-681 readers all decode.
    return quote(value, safe="")


def _query(params: list[tuple[str, str | None]]) -> str:
    parts = [f"{name}={_encode(value)}" for name, value in params if value is not None]
    return "?" + "&".join(parts) if parts else ""


def _positive_int(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def plain_decimal(value: Decimal) -> str:
    """A finite Decimal as digits with no exponent and no trailing zeros ("0.5", "21000000")."""
    if not value.is_finite():
        raise ValueError(f"amount must be finite, got {value}")
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def base_units_to_decimal_string(units: int, decimals: int) -> str:
    """Integer base units as whole units: (150000000, 8) -> "1.5". Exact, no float."""
    if isinstance(units, bool) or not isinstance(units, int):
        raise ValueError(f"units must be an integer, got {units!r}")
    if decimals < 0:
        raise ValueError(f"decimals must not be negative, got {decimals}")
    # Built from its digits: Decimal.scaleb would round to the context's 28 digits.
    digits = tuple(int(digit) for digit in str(abs(units)))
    return plain_decimal(Decimal((1 if units < 0 else 0, digits, -decimals)))


def bip21_uri(*, address: str, amount_sats: int, label: str | None = None, message: str | None = None) -> str:
    """``bitcoin:ADDRESS?amount=BTC&label=..&message=..`` (BIP21).

    The address is kept as given: upper-casing bech32 makes a denser QR code, but
    some wallets still mishandle an upper-case address, so the caller decides.
    """
    if not _BITCOIN_ADDRESS.fullmatch(address):
        raise ValueError(f"not a Bitcoin address: {address!r}")
    _positive_int(amount_sats, "amount_sats")
    amount = base_units_to_decimal_string(amount_sats, SATS_PER_BTC_DECIMALS)
    return f"bitcoin:{address}" + _query([("amount", amount), ("label", label), ("message", message)])


def _solana_key(value: str, name: str) -> str:
    try:
        return str(Pubkey.from_string(value))
    except ValueError as exc:
        raise ValueError(f"{name} is not a base58 Solana public key: {value!r}") from exc


def solana_pay_uri(
    *,
    recipient: str,
    amount: Decimal | str,
    spl_token: str | None,
    reference: str,
    label: str | None = None,
    message: str | None = None,
    memo: str | None = None,
    decimals: int | None = None,
) -> str:
    """A Solana Pay transfer request: ``solana:RECIPIENT?amount=..&spl-token=..&reference=..``.

    ``amount`` is in whole units of the token (or SOL), as the Solana Pay spec
    requires; pass ``decimals`` (the mint's) to refuse an amount more precise
    than the token can carry instead of letting the wallet reject or round it.
    """
    try:
        value = Decimal(amount)
    except (InvalidOperation, TypeError, ValueError) as exc:
        raise ValueError(f"amount is not a decimal number: {amount!r}") from exc
    if not value.is_finite() or value <= 0:
        raise ValueError(f"amount must be a positive finite number, got {amount!r}")
    text = plain_decimal(value)
    if decimals is not None and "." in text and len(text.split(".")[1]) > decimals:
        raise ValueError(f"amount {text} has more than {decimals} decimal places")
    params: list[tuple[str, str | None]] = [
        ("amount", text),
        ("spl-token", _solana_key(spl_token, "spl_token") if spl_token is not None else None),
        ("reference", _solana_key(reference, "reference")),
        ("label", label),
        ("message", message),
        ("memo", memo),
    ]
    return f"solana:{_solana_key(recipient, 'recipient')}" + _query(params)


def new_solana_reference() -> str:
    """A fresh Solana Pay ``reference``: 32 random bytes as a base58 public key.

    Built from random bytes rather than a generated keypair: a reference is only
    an account key to look transactions up by, and the service holds no keys.
    """
    return str(Pubkey(secrets.token_bytes(32)))


def eip681_uri(
    *,
    chain_id: int,
    recipient: str,
    amount_base_units: int,
    token_address: str | None,
    native_decimals_in_base_units: int = 9,
) -> str:
    """An EIP-681 payment request for a native transfer or an ERC-20 ``transfer``.

    Native: ``ethereum:RECIPIENT@CHAIN?value=WEI``. The service counts ETH in gwei
    (9 decimals), and EIP-681's ``value`` is in wei, so the native amount is
    multiplied by ``10 ** native_decimals_in_base_units`` (10**9 by default):
    1 gwei -> ``value=1000000000``. Exact integer arithmetic, no exponent form.

    Token: ``ethereum:TOKEN@CHAIN/transfer?address=RECIPIENT&uint256=UNITS`` with
    ``amount_base_units`` passed through unchanged (the token's own base units).
    """
    _positive_int(chain_id, "chain_id")
    _positive_int(amount_base_units, "amount_base_units")
    if not _EVM_ADDRESS.fullmatch(recipient):
        raise ValueError(f"not an EVM address: {recipient!r}")
    if token_address is None:
        if isinstance(native_decimals_in_base_units, bool) or native_decimals_in_base_units < 0:
            raise ValueError("native_decimals_in_base_units must be a non-negative integer")
        wei = amount_base_units * 10**native_decimals_in_base_units
        return f"ethereum:{recipient}@{chain_id}?value={wei}"
    if not _EVM_ADDRESS.fullmatch(token_address):
        raise ValueError(f"not an EVM token address: {token_address!r}")
    return f"ethereum:{token_address}@{chain_id}/transfer?address={recipient}&uint256={amount_base_units}"

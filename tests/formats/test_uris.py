"""Payment URIs are read back with urllib.parse and the specs' own rules, not with our code."""

from __future__ import annotations

import re
from decimal import Decimal
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from solders.pubkey import Pubkey

from payments.uris import (
    base_units_to_decimal_string,
    bip21_uri,
    eip681_uri,
    new_solana_reference,
    solana_pay_uri,
)

SEGWIT = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
TAPROOT_TESTNET = "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c"
SOL_RECIPIENT = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xyybapC8G4wEGGkZwyTDt1v"
EVM_RECIPIENT = "0x52908400098527886E0F7030069857D2E4169EE7"
USDC_ETHEREUM = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
PLAIN_DECIMAL = re.compile(r"(0|[1-9][0-9]*)(\.[0-9]*[1-9])?")
NASTY_TEXT = "Café & Co #1 / 50% off? a=b+c"


def parse(uri: str) -> tuple[str, str, dict[str, list[str]]]:
    parts = urlsplit(uri)
    # keep_blank_values: an empty parameter would still be a bug worth seeing
    return parts.scheme, parts.path, parse_qs(parts.query, keep_blank_values=True, strict_parsing=True)


def btc_amount(query: dict[str, list[str]]) -> Decimal:
    (amount,) = query["amount"]
    assert PLAIN_DECIMAL.fullmatch(amount), amount
    return Decimal(amount)


# --- BIP21 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sats", "btc"),
    [
        (1, "0.00000001"),
        (546, "0.00000546"),
        (100_000_000, "1"),
        (150_000_000, "1.5"),
        (123_456_789, "1.23456789"),
        (21_000_000 * 100_000_000, "21000000"),
    ],
)
def test_bip21_amount_is_the_exact_btc_value_with_no_trailing_zeros(sats, btc):
    scheme, address, query = parse(bip21_uri(address=SEGWIT, amount_sats=sats))

    assert scheme == "bitcoin"
    assert address == SEGWIT
    assert query["amount"] == [btc]
    assert btc_amount(query) * 100_000_000 == sats


def test_bip21_label_and_message_survive_characters_that_need_escaping():
    uri = bip21_uri(address=TAPROOT_TESTNET, amount_sats=12_345, label=NASTY_TEXT, message="Invoice 42\nthanks")

    _, _, query = parse(uri)
    assert query["label"] == [NASTY_TEXT]
    assert query["message"] == ["Invoice 42\nthanks"]
    # BIP21 readers split on "&" and "=" before decoding: none may appear raw in a value
    assert uri.count("&") == 2
    assert " " not in uri and "+" not in uri and "#" not in uri


def test_bip21_leaves_out_label_and_message_when_not_given():
    assert bip21_uri(address=SEGWIT, amount_sats=1) == f"bitcoin:{SEGWIT}?amount=0.00000001"


@pytest.mark.parametrize("sats", [0, -1, True, 1.5])
def test_bip21_refuses_an_amount_that_is_not_a_positive_integer(sats):
    with pytest.raises(ValueError):
        bip21_uri(address=SEGWIT, amount_sats=sats)


def test_bip21_refuses_an_address_that_would_inject_uri_parameters():
    with pytest.raises(ValueError):
        bip21_uri(address=SEGWIT + "?amount=0.1", amount_sats=1)


# --- Solana Pay ------------------------------------------------------------------------


def test_solana_pay_spl_transfer_carries_amount_mint_and_reference():
    reference = new_solana_reference()

    uri = solana_pay_uri(
        recipient=SOL_RECIPIENT, amount=Decimal("12.5"), spl_token=USDC_MINT, reference=reference, label=NASTY_TEXT
    )

    scheme, recipient, query = parse(uri)
    assert scheme == "solana"
    assert recipient == SOL_RECIPIENT
    assert query["amount"] == ["12.5"]
    assert query["spl-token"] == [USDC_MINT]
    assert query["reference"] == [reference]
    assert query["label"] == [NASTY_TEXT]
    assert "message" not in query and "memo" not in query


def test_solana_pay_native_transfer_has_no_spl_token_and_keeps_the_memo():
    uri = solana_pay_uri(
        recipient=SOL_RECIPIENT,
        amount="0.000000001",
        spl_token=None,
        reference=new_solana_reference(),
        message="Thanks!",
        memo="draft 7c1e&x",
    )

    _, _, query = parse(uri)
    assert "spl-token" not in query
    assert query["amount"] == ["0.000000001"]  # 1 lamport, leading zero as the spec requires
    assert query["message"] == ["Thanks!"]
    assert query["memo"] == ["draft 7c1e&x"]


@pytest.mark.parametrize(
    ("amount", "written"),
    [
        (Decimal("1E+2"), "100"),
        (Decimal("1E-9"), "0.000000001"),
        (Decimal("5.000000"), "5"),
        ("1000000000.123456", "1000000000.123456"),
        (Decimal(123_456_789_012_345).scaleb(-6), "123456789.012345"),
    ],
)
def test_solana_pay_amount_is_written_without_exponent_or_trailing_zeros(amount, written):
    uri = solana_pay_uri(recipient=SOL_RECIPIENT, amount=amount, spl_token=USDC_MINT, reference=new_solana_reference())

    (text,) = parse(uri)[2]["amount"]
    assert text == written
    assert PLAIN_DECIMAL.fullmatch(text)
    assert Decimal(text) == Decimal(amount)


def test_solana_pay_refuses_more_decimals_than_the_mint_has():
    with pytest.raises(ValueError, match="decimal places"):
        solana_pay_uri(
            recipient=SOL_RECIPIENT,
            amount="0.0000001",
            spl_token=USDC_MINT,
            reference=new_solana_reference(),
            decimals=6,
        )


@pytest.mark.parametrize("amount", ["0", "-1", "NaN", "Infinity", "abc"])
def test_solana_pay_refuses_an_amount_that_is_not_positive_and_finite(amount):
    with pytest.raises(ValueError):
        solana_pay_uri(recipient=SOL_RECIPIENT, amount=amount, spl_token=None, reference=new_solana_reference())


def test_solana_pay_refuses_a_recipient_that_is_not_a_public_key():
    with pytest.raises(ValueError):
        solana_pay_uri(recipient="not-base58-0OIl", amount="1", spl_token=None, reference=new_solana_reference())


def test_each_solana_reference_is_a_distinct_32_byte_public_key():
    references = {new_solana_reference() for _ in range(50)}

    assert len(references) == 50
    for reference in references:
        assert len(bytes(Pubkey.from_string(reference))) == 32


# --- EIP-681 ---------------------------------------------------------------------------


def parse_eip681(uri: str) -> tuple[str, int, str | None, dict[str, list[str]]]:
    scheme, path, query = parse(uri)
    assert scheme == "ethereum"
    target, _, function = path.partition("/")
    address, _, chain = target.partition("@")
    return address, int(chain), function or None, query


@pytest.mark.parametrize(
    ("gwei", "wei"),
    [
        (1, 10**9),
        (1_000_000_000, 10**18),
        (123_456_789_012, 123_456_789_012 * 10**9),
    ],
)
def test_eip681_native_value_is_the_gwei_amount_in_wei_exactly(gwei, wei):
    uri = eip681_uri(chain_id=8453, recipient=EVM_RECIPIENT, amount_base_units=gwei, token_address=None)

    address, chain_id, function, query = parse_eip681(uri)
    assert (address, chain_id, function) == (EVM_RECIPIENT, 8453, None)
    assert query == {"value": [str(wei)]}


def test_eip681_token_transfer_names_the_recipient_and_raw_token_units():
    large = 2**96 + 12_345  # beyond any float's exact range
    uri = eip681_uri(chain_id=1, recipient=EVM_RECIPIENT, amount_base_units=large, token_address=USDC_ETHEREUM)

    address, chain_id, function, query = parse_eip681(uri)
    assert (address, chain_id, function) == (USDC_ETHEREUM, 1, "transfer")
    assert query == {"address": [EVM_RECIPIENT], "uint256": [str(large)]}
    assert "e" not in unquote(uri.split("uint256=")[1]).lower()


@pytest.mark.parametrize("bad", [{"chain_id": 0}, {"amount_base_units": 0}, {"recipient": "0x1234"}])
def test_eip681_refuses_bad_chain_amount_or_address(bad):
    kwargs = {"chain_id": 1, "recipient": EVM_RECIPIENT, "amount_base_units": 1, "token_address": None} | bad
    with pytest.raises(ValueError):
        eip681_uri(**kwargs)


def test_base_units_convert_to_whole_units_exactly():
    assert base_units_to_decimal_string(1, 6) == "0.000001"
    assert base_units_to_decimal_string(10**30 + 1, 18) == "1000000000000.000000000000000001"
    assert base_units_to_decimal_string(5_000_000, 6) == "5"

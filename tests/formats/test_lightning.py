"""BOLT11 invoices and Lightning addresses, with real invoices signed by a test key."""

from __future__ import annotations

import hashlib
import socket
import time
from datetime import UTC, datetime, timedelta

import pytest
from bech32 import bech32_decode, bech32_encode

from core.problems import Problem
from payments.lightning import check_invoice_amount, decode_invoice, fetch_invoice_for_lightning_address
from tests.formats.conftest import INVOICE_DATE, METADATA

BEFORE_EXPIRY = datetime.fromtimestamp(INVOICE_DATE, tz=UTC) + timedelta(minutes=5)


def problem_of(call, *args, **kwargs) -> Problem:
    with pytest.raises(Problem) as caught:
        call(*args, **kwargs)
    assert caught.value.status_code == 400
    return caught.value


def field_of(problem: Problem) -> str:
    (error,) = problem.errors
    assert error["code"] == problem.code
    return error["field"]


def with_hrp(invoice: str, hrp: str) -> str:
    """The same data and signature under another prefix, with a valid bech32 checksum."""
    _, data = bech32_decode(invoice)
    return bech32_encode(hrp, data)


# --- decode_invoice --------------------------------------------------------------------


def test_a_mainnet_invoice_decodes_with_its_amount_hash_times_and_payee(make_invoice, node_key):
    text = make_invoice(amount_msat=250_000_000, payment_hash="ab" * 32, expiry=900)

    invoice = decode_invoice(text, network="Mainnet", now=BEFORE_EXPIRY)

    assert invoice.amount_msat == 250_000_000
    assert invoice.payment_hash == "ab" * 32
    assert invoice.created_at == datetime.fromtimestamp(INVOICE_DATE, tz=UTC)
    assert invoice.expires_at - invoice.created_at == timedelta(seconds=900)
    assert invoice.payee == node_key.public_hex
    assert invoice.description == "Draft 1 at the test shop"
    assert invoice.network == "Mainnet"


def test_an_invoice_with_an_explicit_payee_field_is_verified_against_it(make_invoice, node_key):
    invoice = decode_invoice(make_invoice(keep_payee=True), network="Mainnet", now=BEFORE_EXPIRY)

    assert invoice.payee == node_key.public_hex


@pytest.mark.parametrize("currency", ["tb", "tbs"])
def test_testnet_and_signet_invoices_are_accepted_on_testnet(make_invoice, currency):
    invoice = decode_invoice(make_invoice(currency=currency), network="Testnet", now=BEFORE_EXPIRY)

    assert invoice.bolt11.startswith(f"ln{currency}2500u1")


@pytest.mark.parametrize(("network", "currency"), [("Signet", "tbs"), ("Regtest", "bcrt")])
def test_signet_takes_lntbs_and_regtest_lnbcrt_invoices(make_invoice, network, currency):
    invoice = decode_invoice(make_invoice(currency=currency), network=network, now=BEFORE_EXPIRY)

    assert invoice.bolt11.startswith(f"ln{currency}2500u1")


@pytest.mark.parametrize(("network", "currency"), [("Signet", "tb"), ("Signet", "bcrt"), ("Regtest", "tbs")])
def test_signet_and_regtest_refuse_other_chains_invoices(make_invoice, network, currency):
    with pytest.raises(Problem) as caught:
        decode_invoice(make_invoice(currency=currency), network=network, now=BEFORE_EXPIRY)

    assert caught.value.code == "invoice_network_mismatch"


def test_an_upper_case_invoice_with_a_lightning_prefix_is_read(make_invoice):
    text = make_invoice()

    invoice = decode_invoice(f"  LIGHTNING:{text.upper()} ", network="Mainnet", now=BEFORE_EXPIRY)

    assert invoice.bolt11 == text


@pytest.mark.parametrize(
    ("currency", "network"),
    [("tb", "Mainnet"), ("tbs", "Mainnet"), ("bc", "Testnet"), ("bcrt", "Testnet"), ("bc", "Solana")],
)
def test_an_invoice_for_another_network_is_a_network_mismatch(make_invoice, currency, network):
    problem = problem_of(decode_invoice, make_invoice(currency=currency), network=network, now=BEFORE_EXPIRY)

    assert problem.code == "invoice_network_mismatch"
    assert field_of(problem) == "bolt11"


def test_an_expired_invoice_is_refused(make_invoice):
    text = make_invoice(expiry=600)
    at_expiry = datetime.fromtimestamp(INVOICE_DATE + 600, tz=UTC)

    assert decode_invoice(text, network="Mainnet", now=at_expiry - timedelta(seconds=1))
    problem = problem_of(decode_invoice, text, network="Mainnet", now=at_expiry)
    assert problem.code == "invoice_expired"


def test_expiry_is_judged_by_the_real_clock_when_no_time_is_given(make_invoice):
    fresh = make_invoice(date=int(time.time()))
    stale = make_invoice(date=int(time.time()) - 7200)

    assert decode_invoice(fresh, network="Mainnet")
    assert problem_of(decode_invoice, stale, network="Mainnet").code == "invoice_expired"


def test_an_amountless_invoice_is_refused(make_invoice):
    problem = problem_of(decode_invoice, make_invoice(amount_msat=None), network="Mainnet", now=BEFORE_EXPIRY)

    assert problem.code == "invoice_amountless"
    assert field_of(problem) == "bolt11"


def test_an_amountless_invoice_can_be_read_when_asked_for(make_invoice):
    invoice = decode_invoice(
        make_invoice(amount_msat=None), network="Mainnet", now=BEFORE_EXPIRY, allow_amountless=True
    )

    assert invoice.amount_msat is None


def test_a_changed_character_breaks_the_invoice(make_invoice):
    text = make_invoice()
    position = len(text) - 20
    tampered = text[:position] + ("q" if text[position] != "q" else "p") + text[position + 1 :]

    problem = problem_of(decode_invoice, tampered, network="Mainnet", now=BEFORE_EXPIRY)

    assert problem.code == "invalid_bolt11"


def test_a_re_checksummed_tampered_invoice_fails_against_its_payee_field(make_invoice):
    tampered = with_hrp(make_invoice(keep_payee=True), "lnbc2400u")  # signature covers the old amount

    problem = problem_of(decode_invoice, tampered, network="Mainnet", now=BEFORE_EXPIRY)

    assert problem.code == "invalid_bolt11"


def test_a_re_checksummed_tampered_invoice_without_payee_recovers_a_stranger(make_invoice, node_key):
    # Without an n field BOLT11 recovers the key: tampering shows as a different payee.
    tampered = with_hrp(make_invoice(), "lnbc2400u")

    invoice = decode_invoice(tampered, network="Mainnet", now=BEFORE_EXPIRY)

    assert invoice.amount_msat == 240_000_000
    assert invoice.payee != node_key.public_hex


@pytest.mark.parametrize(
    "text",
    ["", "lnbc1", "hello", "bitcoin:bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "lnbc" + "q" * 8000, 42],
)
def test_garbage_is_an_invalid_invoice(text):
    problem = problem_of(decode_invoice, text, network="Mainnet", now=BEFORE_EXPIRY)

    assert problem.code == "invalid_bolt11"


def test_a_mixed_case_invoice_is_invalid(make_invoice):
    text = make_invoice()

    problem = problem_of(decode_invoice, text[:10] + text[10:].upper(), network="Mainnet", now=BEFORE_EXPIRY)

    assert problem.code == "invalid_bolt11"


def test_a_pico_amount_that_is_not_whole_millisatoshis_is_invalid(make_invoice):
    # lnbc15p is 1.5 msat: BOLT11 says fail, the library alone would round to 1 msat
    problem = problem_of(decode_invoice, with_hrp(make_invoice(), "lnbc15p"), network="Mainnet", now=BEFORE_EXPIRY)

    assert problem.code == "invalid_bolt11"


def test_a_custom_field_name_is_used_in_errors(make_invoice):
    problem = problem_of(decode_invoice, "nope", network="Mainnet", field="items[3].bolt11")

    assert field_of(problem) == "items[3].bolt11"


# --- check_invoice_amount --------------------------------------------------------------


@pytest.fixture
def invoice_of(make_invoice):
    def make(amount_msat):
        return decode_invoice(make_invoice(amount_msat=amount_msat), network="Mainnet", now=BEFORE_EXPIRY)

    return make


def test_the_invoice_amount_is_the_draft_amount_in_sats(invoice_of):
    invoice = invoice_of(1_000)

    assert check_invoice_amount(invoice, None) == 1
    assert check_invoice_amount(invoice, 1) == 1


def test_a_request_amount_that_disagrees_with_the_invoice_is_refused(invoice_of):
    problem = problem_of(check_invoice_amount, invoice_of(250_000_000), 249_999)

    assert problem.code == "invoice_amount_mismatch"
    assert field_of(problem) == "amountSats"


def test_an_invoice_for_a_fraction_of_a_sat_is_refused(invoice_of):
    problem = problem_of(check_invoice_amount, invoice_of(1_500), None)

    assert problem.code == "invoice_sub_satoshi_amount"
    assert field_of(problem) == "bolt11"


def test_an_amountless_invoice_has_no_draft_amount(make_invoice):
    invoice = decode_invoice(
        make_invoice(amount_msat=None), network="Mainnet", now=BEFORE_EXPIRY, allow_amountless=True
    )

    assert problem_of(check_invoice_amount, invoice, 100).code == "invoice_amountless"


# --- Lightning address -----------------------------------------------------------------


def test_a_lightning_address_yields_a_signed_invoice_for_exactly_the_amount(lnurl_server):
    result = fetch_invoice_for_lightning_address(lnurl_server.address, 21_000_000, network="Mainnet")

    assert lnurl_server.callbacks == [21_000_000]
    assert result.invoice.amount_msat == 21_000_000
    assert result.invoice.payee == lnurl_server.key.public_hex
    assert result.invoice.description_hash == hashlib.sha256(METADATA.encode()).hexdigest()
    assert result.bolt11 == result.invoice.bolt11
    assert result.verify_url == f"{lnurl_server.base}/lnurlp/alice/verify/{result.invoice.payment_hash}"
    assert check_invoice_amount(result.invoice, 21_000) == 21_000


def test_a_redirect_on_the_same_host_is_followed(lnurl_server):
    result = fetch_invoice_for_lightning_address(f"moved@127.0.0.1:{lnurl_server.port}", 5_000, network="Mainnet")

    assert result.invoice.amount_msat == 5_000


def test_the_verify_url_is_optional(lnurl_server):
    lnurl_server.verify = False

    assert fetch_invoice_for_lightning_address(lnurl_server.address, 5_000, network="Mainnet").verify_url is None


def test_a_testnet_lightning_address_works_on_testnet_only(lnurl_server):
    lnurl_server.currency = "tb"

    assert fetch_invoice_for_lightning_address(lnurl_server.address, 5_000, network="Testnet")
    problem = problem_of(fetch_invoice_for_lightning_address, lnurl_server.address, 5_000, network="Mainnet")
    assert problem.code == "invoice_network_mismatch"
    assert field_of(problem) == "lightningAddress"


@pytest.mark.parametrize("amount", [999, 1_000_000_001])
def test_an_amount_outside_min_and_max_sendable_is_refused_before_asking_for_an_invoice(lnurl_server, amount):
    problem = problem_of(fetch_invoice_for_lightning_address, lnurl_server.address, amount, network="Mainnet")

    assert problem.code == "lightning_amount_out_of_range"
    assert problem.extra == {"minSendableMsat": 1_000, "maxSendableMsat": 1_000_000_000}
    assert lnurl_server.callbacks == []


@pytest.mark.parametrize(
    ("mode", "code"),
    [
        ("wrong_amount", "lightning_address_invalid_response"),
        ("wrong_hash", "lightning_address_invalid_response"),
        ("html", "lightning_address_invalid_response"),
        ("missing_fields", "lightning_address_invalid_response"),
        ("not_pay_request", "lightning_address_invalid_response"),
        ("plain_http_callback", "lightning_address_invalid_response"),
        ("error_status", "lightning_address_invalid_response"),
        ("huge", "lightning_address_invalid_response"),
        ("redirect_elsewhere", "lightning_address_invalid_response"),
        ("server_error", "lightning_address_unreachable"),
        ("slow", "lightning_address_unreachable"),
    ],
)
def test_a_misbehaving_lnurl_server_is_refused(lnurl_server, mode, code):
    lnurl_server.mode = mode

    problem = problem_of(
        fetch_invoice_for_lightning_address, lnurl_server.address, 50_000, network="Mainnet", field="receiver"
    )

    assert problem.code == code
    assert field_of(problem) == "receiver"


def test_an_unknown_user_is_unreachable(lnurl_server):
    address = f"bob@127.0.0.1:{lnurl_server.port}"

    problem = problem_of(fetch_invoice_for_lightning_address, address, 50_000, network="Mainnet")

    assert problem.code == "lightning_address_unreachable"


def test_a_closed_port_is_unreachable(lnurl_server):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]

    problem = problem_of(fetch_invoice_for_lightning_address, f"alice@127.0.0.1:{free_port}", 1_000, network="Mainnet")

    assert problem.code == "lightning_address_unreachable"


def test_loopback_lightning_addresses_are_refused_unless_the_setting_allows_them(lnurl_server, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = False

    problem = problem_of(fetch_invoice_for_lightning_address, lnurl_server.address, 50_000, network="Mainnet")

    assert problem.code == "invalid_lightning_address"
    assert lnurl_server.callbacks == []


@pytest.mark.parametrize("address", ["alice@10.0.0.7", "alice@169.254.169.254", "alice@[::1]"])
def test_private_network_targets_are_refused_without_connecting(address, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = False

    problem = problem_of(fetch_invoice_for_lightning_address, address, 50_000, network="Mainnet")

    assert problem.code in {"lightning_address_unreachable", "invalid_lightning_address"}


@pytest.mark.parametrize("address", ["alice", "@example.com", "alice@", "al ice@example.com", "alice@example.com:8443"])
def test_a_malformed_lightning_address_is_refused(address):
    problem = problem_of(fetch_invoice_for_lightning_address, address, 50_000, network="Mainnet")

    assert problem.code == "invalid_lightning_address"

"""The tx template, read back with tools that share no code with the builder."""

from __future__ import annotations

import csv
import io
import json
import shlex
from decimal import Decimal

import bitcointx
import pytest
from bitcointx.wallet import CCoinAddress
from embit.psbt import PSBT

from drafts.txtemplate import TxOutput, btc_string, build_tx_template
from tests.formats.psbt_reader import output_amount, output_script, read_psbt_v2

MAINNET_RECEIVER = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"  # P2WPKH
MAINNET_FEE = "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"  # P2SH
MAINNET_TAPROOT = "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297"
TESTNET_RECEIVER = "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c"  # P2TR
TESTNET_FEE = "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn"  # P2PKH
CHAIN = {"Mainnet": "bitcoin/mainnet", "Testnet": "bitcoin/testnet"}


def script_for(address: str, network: str) -> bytes:
    with bitcointx.ChainParams(CHAIN[network]):
        return bytes(CCoinAddress(address).to_scriptPubKey())


def template(network: str = "Mainnet", outputs: list[TxOutput] | None = None) -> dict:
    outputs = outputs or [
        TxOutput(MAINNET_RECEIVER, 1_234_567, "Receiver"),
        TxOutput(MAINNET_FEE, 6_050, "PlatformFee"),
    ]
    return build_tx_template(draft_id="5d1c9b86-0000-4000-8000-000000000001", network=network, outputs=outputs)


def cli_outputs(line: str) -> tuple[list[str], list[dict[str, Decimal]]]:
    argv = shlex.split(line)
    assert argv[argv.index("walletcreatefundedpsbt") + 1] == "[]"
    outputs = json.loads(argv[-1], parse_float=Decimal, parse_int=Decimal)
    return argv, outputs


def test_outputs_list_the_receiver_first_then_the_fee_and_add_up():
    result = template()

    assert result["draftId"] == "5d1c9b86-0000-4000-8000-000000000001"
    assert result["network"] == "Mainnet"
    assert result["outputs"] == [
        {"address": MAINNET_RECEIVER, "amountSats": 1_234_567, "amountBtc": "0.01234567", "purpose": "Receiver"},
        {"address": MAINNET_FEE, "amountSats": 6_050, "amountBtc": "0.00006050", "purpose": "PlatformFee"},
    ]
    assert sum(output["amountSats"] for output in result["outputs"]) == 1_234_567 + 6_050


@pytest.mark.parametrize(
    ("network", "receiver", "fee"),
    [("Mainnet", MAINNET_RECEIVER, MAINNET_FEE), ("Testnet", TESTNET_RECEIVER, TESTNET_FEE)],
)
def test_psbt_v2_is_an_outputs_only_psbt_paying_exactly_the_outputs(network, receiver, fee):
    result = template(network, [TxOutput(receiver, 99_999, "Receiver"), TxOutput(fee, 546, "PlatformFee")])

    psbt = read_psbt_v2(result["psbtV2"])

    assert psbt.inputs == []
    assert int.from_bytes(psbt.globals[b"\x02"], "little") == 2  # tx version
    assert psbt.globals[b"\x06"][0] & 0b011 == 0b011  # inputs and outputs modifiable
    assert psbt.globals[b"\x06"][0] & 0b100 == 0  # no SIGHASH_SINGLE
    assert [(output_script(o), output_amount(o)) for o in psbt.outputs] == [
        (script_for(receiver, network), 99_999),
        (script_for(fee, network), 546),
    ]


def test_psbt_v2_also_reads_back_with_embit():
    # embit cannot read a version-0 PSBT without inputs (it takes the zero input
    # count for a segwit marker); BDK and bitcoinjs-lib read `psbt` in
    # tests/formats/test_wallet_libraries.py.
    psbt = PSBT.from_base64(template()["psbtV2"])

    assert psbt.version == 2
    assert [out.value for out in psbt.outputs] == [1_234_567, 6_050]


def test_the_bitcoin_cli_line_is_a_runnable_walletcreatefundedpsbt_call():
    argv, outputs = cli_outputs(template()["bitcoinCli"])

    assert argv[:2] == ["bitcoin-cli", "walletcreatefundedpsbt"]
    assert outputs == [{MAINNET_RECEIVER: Decimal("0.01234567")}, {MAINNET_FEE: Decimal("0.00006050")}]


@pytest.mark.parametrize(
    ("network", "address", "flag"),
    [
        ("Signet", "tb1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j20l03x8", "-signet"),
        ("Regtest", "bcrt1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j2dkku3w", "-regtest"),
    ],
)
def test_the_bitcoin_cli_line_selects_signet_or_regtest(network, address, flag):
    argv, parsed = cli_outputs(template(network, [TxOutput(address, 1_000, "Receiver")])["bitcoinCli"])

    assert argv[:3] == ["bitcoin-cli", flag, "walletcreatefundedpsbt"]
    assert parsed == [{address: Decimal("0.00001000")}]


def test_a_regtest_address_is_refused_in_a_signet_template():
    with pytest.raises(ValueError):
        template("Signet", [TxOutput("bcrt1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j2dkku3w", 1_000, "Receiver")])


def test_the_bitcoin_cli_line_selects_testnet4_on_testnet():
    outputs = [TxOutput(TESTNET_RECEIVER, 1, "Receiver")]

    argv, parsed = cli_outputs(template("Testnet", outputs)["bitcoinCli"])

    assert argv[:3] == ["bitcoin-cli", "-testnet4", "walletcreatefundedpsbt"]
    assert parsed == [{TESTNET_RECEIVER: Decimal("0.00000001")}]


def test_the_csv_lists_every_output_in_btc_without_a_header():
    result = template()
    rows = list(csv.reader(io.StringIO(result["payToManyCsv"])))

    assert result["payToManyCsv"] == f"{MAINNET_RECEIVER},0.01234567\n{MAINNET_FEE},0.00006050\n"
    assert rows == [[MAINNET_RECEIVER, "0.01234567"], [MAINNET_FEE, "0.00006050"]]
    assert result["payToManyUnit"] == "BTC"
    assert sum(Decimal(amount) for _, amount in rows) * 100_000_000 == 1_234_567 + 6_050


def test_two_outputs_to_one_address_stay_apart_in_psbt_and_csv_and_merge_for_bitcoin_core():
    # Bitcoin Core refuses a repeated address in walletcreatefundedpsbt.
    result = template(
        outputs=[TxOutput(MAINNET_TAPROOT, 50_000, "Receiver"), TxOutput(MAINNET_TAPROOT, 700, "PlatformFee")]
    )

    psbt = read_psbt_v2(result["psbtV2"])
    assert [output_amount(o) for o in psbt.outputs] == [50_000, 700]
    assert len(list(csv.reader(io.StringIO(result["payToManyCsv"])))) == 2
    _, outputs = cli_outputs(result["bitcoinCli"])
    assert outputs == [{MAINNET_TAPROOT: Decimal("0.00050700")}]


def test_an_upper_case_bech32_address_is_written_in_lower_case():
    result = template(outputs=[TxOutput(MAINNET_RECEIVER.upper(), 10_000, "Receiver")])

    assert result["outputs"][0]["address"] == MAINNET_RECEIVER
    assert output_script(read_psbt_v2(result["psbtV2"]).outputs[0]) == script_for(MAINNET_RECEIVER, "Mainnet")


@pytest.mark.parametrize(
    ("network", "address"),
    [("Mainnet", TESTNET_RECEIVER), ("Testnet", MAINNET_RECEIVER), ("Testnet", MAINNET_FEE), ("Mainnet", "bc1qnope")],
)
def test_an_address_of_another_network_or_a_broken_one_is_refused(network, address):
    with pytest.raises(ValueError):
        template(network, [TxOutput(address, 1_000, "Receiver")])


@pytest.mark.parametrize("amount", [0, -5, True, 21_000_000 * 100_000_000 + 1])
def test_an_impossible_amount_is_refused(amount):
    with pytest.raises(ValueError):
        template(outputs=[TxOutput(MAINNET_RECEIVER, amount, "Receiver")])


def test_a_non_bitcoin_network_is_refused():
    with pytest.raises(ValueError):
        template("Ethereum")


def test_btc_strings_have_exactly_eight_decimals():
    assert btc_string(1) == "0.00000001"
    assert btc_string(2_100_000_000_000_000) == "21000000.00000000"

"""The tx template and payment URIs as wallets written by others read them.

BDK (bdkpython) funds, signs and finalizes a transaction from our PSBT;
bitcoinjs-lib (npm, package.json) parses it; Electrum (Debian's
python3-electrum, scripts/system-deps.sh test) parses the pay-to-many CSV and the
BIP21 URIs with its own parsers, offline; @solana/pay and eth-url-parser (npm)
parse the Solana Pay and EIP-681 URIs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import bdkpython as bdk
import pytest

from drafts.txtemplate import TxOutput, build_tx_template
from payments.uris import bip21_uri, eip681_uri, new_solana_reference, solana_pay_uri

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"

# (network, receiver, fee address): every address type as receiver, on mainnet, testnet4, signet, regtest.
CASES = {
    "P2WPKH": ("Mainnet", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"),
    "P2WSH": (
        "Mainnet",
        "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3",
        "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2",
    ),
    "P2TR": (
        "Mainnet",
        "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297",
        "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
    ),
    "P2SH": ("Mainnet", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"),
    "P2PKH": ("Mainnet", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"),
    "testnet-P2TR": (
        "Testnet",
        "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c",
        "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn",
    ),
    "testnet-P2WPKH": (
        "Testnet",
        "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
        "2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc",
    ),
    "signet-P2WPKH": (
        "Signet",
        "tb1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j20l03x8",
        "2MwJZGrrQQko1S69xSeZt2bRmCSompaJ7in",
    ),
    "regtest-P2TR": (
        "Regtest",
        "bcrt1pw53jtgez0wf69n06fchp0ctk48620zdscnrj8heh86wykp9mv20q7vd3gm",
        "bcrt1qv9eqw5ttwm5dcvgs4nqradsyvh2f3u0xy8el04llq06vhr2mhrmq9wcck0",
    ),
}
BDK_NETWORK = {
    "Mainnet": (bdk.Network.BITCOIN, bdk.NetworkKind.MAIN),
    "Testnet": (bdk.Network.TESTNET4, bdk.NetworkKind.TEST),
    "Signet": (bdk.Network.SIGNET, bdk.NetworkKind.TEST),
    "Regtest": (bdk.Network.REGTEST, bdk.NetworkKind.TEST),
}
BITCOINJS_NETWORK = {"Mainnet": "bitcoin", "Testnet": "testnet", "Signet": "testnet", "Regtest": "regtest"}
ELECTRUM_NETWORK = {"Mainnet": "mainnet", "Testnet": "testnet", "Signet": "signet", "Regtest": "regtest"}
SEED = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
FUNDING_SATS = 10_000_000


def template(network: str, receiver: str, fee: str | None, *, receiver_sats=1_234_567, fee_sats=6_050) -> dict:
    outputs = [TxOutput(receiver, receiver_sats, "Receiver")]
    if fee:
        outputs.append(TxOutput(fee, fee_sats, "PlatformFee"))
    return build_tx_template(draft_id="5d1c9b86-0000-4000-8000-000000000001", network=network, outputs=outputs)


def _compact(n: int) -> bytes:
    assert n < 0xFD
    return bytes([n])


def funded_wallet(network: str) -> bdk.Wallet:
    """An in-memory BIP84 wallet holding one made-up, unconfirmed coin."""
    chain, kind = BDK_NETWORK[network]
    key = bdk.DescriptorSecretKey(kind, bdk.Mnemonic.from_string(SEED), None)
    wallet = bdk.Wallet(
        bdk.Descriptor.new_bip84(key, bdk.KeychainKind.EXTERNAL, kind),
        bdk.Descriptor.new_bip84(key, bdk.KeychainKind.INTERNAL, kind),
        chain,
        bdk.Persister.new_in_memory(),
    )
    script = wallet.reveal_next_address(bdk.KeychainKind.EXTERNAL).address.script_pubkey().to_bytes()
    funding = b"".join(
        [
            (2).to_bytes(4, "little"),  # version
            _compact(1),
            bytes(range(32)) + (0).to_bytes(4, "little"),  # a made-up outpoint
            _compact(0),  # empty scriptSig
            b"\xff\xff\xff\xff",
            _compact(1),
            FUNDING_SATS.to_bytes(8, "little"),
            _compact(len(script)) + script,
            (0).to_bytes(4, "little"),  # lock time
        ]
    )
    wallet.apply_unconfirmed_txs([bdk.UnconfirmedTx(tx=bdk.Transaction(funding), last_seen=1)])
    assert wallet.balance().total.to_sat() == FUNDING_SATS
    return wallet


def script_of(address: str, network: str) -> str:
    chain, _ = BDK_NETWORK[network]
    return bdk.Address(address, chain).script_pubkey().to_bytes().hex()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("with_fee", [True, False], ids=["two-outputs", "one-output"])
def test_bdk_reads_the_psbt_and_signs_a_transaction_paying_exactly_its_outputs_in_order(case, with_fee):
    network, receiver, fee = CASES[case]
    result = template(network, receiver, fee if with_fee else None)
    expected = [(script_of(o["address"], network), o["amountSats"]) for o in result["outputs"]]

    read = json.loads(bdk.Psbt(result["psbt"]).json_serialize())
    assert read["version"] == 0 and read["unsigned_tx"]["input"] == []
    paid = [(o["script_pubkey"], o["value"]) for o in read["unsigned_tx"]["output"]]
    assert paid == expected

    wallet = funded_wallet(network)
    builder = bdk.TxBuilder().ordering(bdk.TxOrdering.UNTOUCHED).fee_rate(bdk.FeeRate.from_sat_per_vb(2))
    for script_hex, sats in paid:
        builder = builder.add_recipient(bdk.Script(bytes.fromhex(script_hex)), bdk.Amount.from_sat(sats))
    psbt = builder.finish(wallet)
    assert wallet.sign(psbt) is True  # signed and finalized
    tx = psbt.extract_tx()

    outputs = [(o.script_pubkey.to_bytes().hex(), o.value.to_sat()) for o in tx.output()]
    assert outputs[: len(expected)] == expected
    change = outputs[len(expected) :]
    assert len(change) == 1 and wallet.is_mine(bdk.Script(bytes.fromhex(change[0][0])))
    assert len(tx.input()) == 1


def test_bdk_refuses_the_v2_form_so_psbt_is_version_0():
    network, receiver, fee = CASES["P2WPKH"]
    with pytest.raises(bdk.PsbtParseError):
        bdk.Psbt(template(network, receiver, fee)["psbtV2"])


def bitcoinjs(network: str, *psbts: str) -> list[dict]:
    node = shutil.which("node")
    assert node, "node is needed to run bitcoinjs-lib (make test installs it through npm)"
    run = subprocess.run(
        [node, str(ROOT / "tests/formats/bitcoinjs_reader.cjs"), BITCOINJS_NETWORK[network], *psbts],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in run.stdout.splitlines()]


@pytest.mark.parametrize("case", CASES)
def test_bitcoinjs_lib_reads_the_psbt_outputs_in_order(case):
    network, receiver, fee = CASES[case]
    result = template(network, receiver, fee)

    (read,) = bitcoinjs(network, result["psbt"])

    assert read == {
        "inputs": 0,
        "version": 2,
        "outputs": [[script_of(o["address"], network), str(o["amountSats"])] for o in result["outputs"]],
    }


def test_bitcoinjs_lib_misreads_a_one_output_psbt_and_refuses_v2_as_documented():
    # With no inputs and one output the unsigned transaction starts 0x00 0x01,
    # which bitcoinjs-lib 7 takes for a segwit marker: docs/decisions.md says so.
    network, receiver, fee = CASES["P2WPKH"]
    one, two = template(network, receiver, None), template(network, receiver, fee)

    one_v0, two_v2 = bitcoinjs(network, one["psbt"], two["psbtV2"])

    assert "error" in one_v0 and "error" in two_v2


@pytest.fixture(scope="module")
def electrum_readings() -> dict:
    """Every case read by Electrum in one run (its start-up takes seconds)."""
    has_electrum = subprocess.run([SYSTEM_PYTHON, "-c", "import electrum, PyQt5"], capture_output=True).returncode == 0
    assert has_electrum, "python3-electrum and python3-pyqt5 are missing: run scripts/system-deps.sh test"
    requests, expected = [], {}
    for case, (network, receiver, fee) in CASES.items():
        result = template(network, receiver, fee, receiver_sats=2_100_000_000_000_000 - 6_050)
        uri = bip21_uri(address=receiver, amount_sats=1_234_567, label="Café & Co", message="Order 7/8 ?ok")
        requests.append({"network": ELECTRUM_NETWORK[network], "payToMany": result["payToManyCsv"], "uris": [uri]})
        expected[case] = result
    run = subprocess.run(
        [SYSTEM_PYTHON, str(ROOT / "tests/formats/electrum_reader.py")],
        input=json.dumps(requests),
        env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return {case: (expected[case], reading) for case, reading in zip(CASES, json.loads(run.stdout), strict=True)}


@pytest.mark.parametrize("case", CASES)
def test_electrum_pay_to_many_takes_the_csv_verbatim_in_btc(case, electrum_readings):
    network = CASES[case][0]
    result, reading = electrum_readings[case]

    assert result["payToManyUnit"] == "BTC"
    assert reading["payToMany"]["errors"] == []
    expected = [[script_of(o["address"], network), o["amountSats"]] for o in result["outputs"]]
    assert reading["payToMany"]["outputs"] == expected


@pytest.mark.parametrize("case", CASES)
def test_electrum_reads_our_bip21_uris(case, electrum_readings):
    _, reading = electrum_readings[case]

    assert reading["uris"] == [
        {"address": CASES[case][1], "amount": 1_234_567, "label": "Café & Co", "message": "Order 7/8 ?ok"}
    ]


# --- Solana Pay and EIP-681 URIs, read by @solana/pay and eth-url-parser (npm, package.json) ------

SOLANA_RECIPIENT = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
EVM_RECIPIENT = "0x52908400098527886E0F7030069857D2E4169EE7"
USDC_ETHEREUM = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"


def read_uris(*uris: str) -> list[dict]:
    node = shutil.which("node")
    assert node, "node is needed to run the npm URI parsers"
    run = subprocess.run(
        [node, str(ROOT / "tests/formats/uri_reader.cjs"), *uris],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in run.stdout.splitlines()]


@pytest.mark.parametrize(
    ("amount", "token"), [("25.5", USDC_MINT), ("0.000001", USDC_MINT), ("1.123456789", None), ("1000000", None)]
)
def test_solana_pay_parses_our_transfer_requests(amount, token):
    reference = new_solana_reference()
    uri = solana_pay_uri(
        recipient=SOLANA_RECIPIENT,
        amount=amount,
        spl_token=token,
        reference=reference,
        label="Café & Co",
        message="Order 7/8 ?ok",
        memo="inv-7",
    )

    (read,) = read_uris(uri)

    assert read == {
        "recipient": SOLANA_RECIPIENT,
        "amount": float(amount),  # @solana/pay 1.0.16 gives a JS number
        "splToken": token,
        "reference": [reference],
        "label": "Café & Co",
        "message": "Order 7/8 ?ok",
        "memo": "inv-7",
    }


@pytest.mark.parametrize(
    ("chain_id", "token", "units", "expected"),
    [
        (1, USDC_ETHEREUM, 25_000_000, {"address": EVM_RECIPIENT, "uint256": "25000000"}),
        (8453, None, 1_234_567, {"value": "1234567000000000"}),  # gwei to wei
        (11155111, None, 1, {"value": "1000000000"}),
    ],
)
def test_an_eip681_parser_reads_our_payment_requests(chain_id, token, units, expected):
    uri = eip681_uri(chain_id=chain_id, recipient=EVM_RECIPIENT, amount_base_units=units, token_address=token)

    (read,) = read_uris(uri)

    assert read == {
        "target": token or EVM_RECIPIENT,
        "chainId": str(chain_id),
        "functionName": "transfer" if token else None,
        "parameters": expected,
    }

"""The transaction template of a Bitcoin draft: exact outputs, in the forms wallets take.

One list of outputs (receiver, then the platform fee) is written five ways:
the plain list, a `bitcoin-cli walletcreatefundedpsbt` line, a pay-to-many CSV
(Electrum's format: no header, BTC amounts), an outputs-only BIP174 PSBT
(version 0, which BDK and bitcoinjs-lib read) and the same as a BIP370 PSBTv2.
The payer's wallet adds inputs and change and signs; nothing here holds or
needs a key.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
from dataclasses import dataclass
from typing import Any, Literal

from embit.networks import NETWORKS
from embit.psbt import PSBT, OutputScope
from embit.script import Script, address_to_scriptpubkey

from payments.enums import Network

Purpose = Literal["Receiver", "PlatformFee"]

_PURPOSES = ("Receiver", "PlatformFee")
_EMBIT_NETWORK = {
    Network.MAINNET.value: NETWORKS["main"],
    Network.TESTNET.value: NETWORKS["test"],
    Network.SIGNET.value: NETWORKS["signet"],
    Network.REGTEST.value: NETWORKS["regtest"],
}
# Bitcoin Core >= 28 knows testnet4 by this flag; mainnet needs none.
_CLI_NETWORK_FLAG = {
    Network.MAINNET.value: [],
    Network.TESTNET.value: ["-testnet4"],
    Network.SIGNET.value: ["-signet"],
    Network.REGTEST.value: ["-regtest"],
}
_BECH32_PREFIXES = ("bc1", "tb1", "bcrt1")

# BIP370 keys (https://github.com/bitcoin/bips/blob/master/bip-0370.mediawiki)
_PSBT_GLOBAL_TX_MODIFIABLE = b"\x06"
# Bit 0: inputs may be added; bit 1: outputs may be added. The payer's wallet
# must add both its inputs and its change output. Bit 2 (SIGHASH_SINGLE) stays off.
_INPUTS_AND_OUTPUTS_MODIFIABLE = b"\x03"
_TX_VERSION = 2
_MAX_SATS = 21_000_000 * 100_000_000


@dataclass(frozen=True)
class TxOutput:
    address: str
    amount_sats: int
    purpose: Purpose


def btc_string(sats: int) -> str:
    """Satoshis as a BTC amount with exactly 8 decimals ("0.00010000"): exact, never an exponent."""
    return f"{sats // 100_000_000}.{sats % 100_000_000:08d}"


def _normalized_address(address: str) -> str:
    # Bech32 is case-insensitive but embit and many CSV importers want lower case.
    return address.lower() if address.lower().startswith(_BECH32_PREFIXES) else address


def _script_pubkey(address: str, network: str) -> Script:
    try:
        script = address_to_scriptpubkey(address)
    except Exception as exc:  # embit raises several types for a malformed address
        raise ValueError(f"not a Bitcoin address: {address!r}") from exc
    # embit ignores the network when decoding: re-encode for the draft's network
    # and compare, so a testnet address can never land in a mainnet template.
    if script.address(_EMBIT_NETWORK[network]) != address:
        raise ValueError(f"address {address!r} is not a {network} address")
    return script


def _validated(outputs: list[TxOutput], network: str) -> list[tuple[TxOutput, Script]]:
    if network not in _EMBIT_NETWORK:
        raise ValueError(f"transaction templates are for Bitcoin networks only, not {network!r}")
    if not outputs:
        raise ValueError("a transaction template needs at least one output")
    checked = []
    for output in outputs:
        amount = output.amount_sats
        if isinstance(amount, bool) or not isinstance(amount, int) or not 0 < amount <= _MAX_SATS:
            raise ValueError(f"output amount must be a positive number of satoshis, got {amount!r}")
        if output.purpose not in _PURPOSES:
            raise ValueError(f"unknown output purpose {output.purpose!r}")
        address = _normalized_address(output.address)
        normalized = TxOutput(address=address, amount_sats=amount, purpose=output.purpose)
        checked.append((normalized, _script_pubkey(address, network)))
    if sum(output.amount_sats for output, _ in checked) > _MAX_SATS:
        raise ValueError("outputs add up to more than 21 million BTC")
    return checked


def _cli_line(outputs: list[TxOutput], network: str) -> str:
    # Bitcoin Core refuses a repeated address in any outputs form ("Invalid
    # parameter, duplicated address", ParseOutputs in rawtransaction_util.cpp),
    # so repeated addresses are merged into one output of their sum here. The
    # PSBT and the CSV keep them apart.
    merged: dict[str, int] = {}
    for output in outputs:
        merged[output.address] = merged.get(output.address, 0) + output.amount_sats
    # The array-of-objects form keeps the output order (receiver first).
    # Amounts are JSON numbers written digit for digit, never through a float.
    items = ",".join(f"{{{json.dumps(address)}:{btc_string(sats)}}}" for address, sats in merged.items())
    argv = ["bitcoin-cli", *_CLI_NETWORK_FLAG[network], "walletcreatefundedpsbt", "[]", f"[{items}]"]
    return shlex.join(argv)


def _csv(outputs: list[TxOutput]) -> str:
    # Electrum's "Pay to many" reads `address,amount` lines as they are: a header
    # line is refused as an invalid address, and amounts are read in the user's
    # display unit, BTC by default (stated as payToManyUnit).
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for output in outputs:
        writer.writerow([output.address, btc_string(output.amount_sats)])
    return buf.getvalue()


def _psbt(checked: list[tuple[TxOutput, Script]], *, version: int) -> str:
    # A version-0 PSBT carries the outputs in its unsigned transaction, written
    # without witness data as BIP174 requires; with no inputs it reads as
    # version, 0x00, output count... A version-2 PSBT carries them as fields and
    # says that inputs and outputs may be added.
    # Pass fresh dicts: embit's constructors share a mutable default `unknown`.
    unknown = {_PSBT_GLOBAL_TX_MODIFIABLE: _INPUTS_AND_OUTPUTS_MODIFIABLE} if version == 2 else {}
    psbt = PSBT(unknown=unknown, version=version)
    psbt.tx_version = _TX_VERSION
    for output, script in checked:
        scope = OutputScope(unknown={})
        scope.value = output.amount_sats
        scope.script_pubkey = script
        psbt.outputs.append(scope)
    encoded: str = psbt.to_base64()
    return encoded


def build_tx_template(*, draft_id: str, network: str, outputs: list[TxOutput]) -> dict[str, Any]:
    """The tx-template document: ``{draftId, network, outputs, bitcoinCli, payToManyCsv, payToManyUnit, psbt, psbtV2}``.

    Outputs keep their order (receiver first, then fee outputs). ``amountBtc`` and
    every BTC amount below have exactly 8 decimals. Bech32 addresses come back in
    lower case. Raises ValueError for an address of another network, a
    non-positive amount or a non-Bitcoin network: the draft should never get here
    with those.
    """
    checked = _validated(outputs, network)
    normalized = [output for output, _ in checked]
    return {
        "draftId": str(draft_id),
        "network": network,
        "outputs": [
            {
                "address": output.address,
                "amountSats": output.amount_sats,
                "amountBtc": btc_string(output.amount_sats),
                "purpose": output.purpose,
            }
            for output in normalized
        ],
        "bitcoinCli": _cli_line(normalized, network),
        "payToManyCsv": _csv(normalized),
        "payToManyUnit": "BTC",
        "psbt": _psbt(checked, version=0),
        "psbtV2": _psbt(checked, version=2),
    }

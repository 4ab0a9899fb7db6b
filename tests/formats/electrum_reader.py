"""Reads pay-to-many text and BIP21 URIs with Electrum's own parsers, offline.

Run by Debian's system Python (`/usr/bin/python3`, where `python3-electrum` and
`python3-pyqt5` install), not the project's venv: a JSON list of
``{"network", "payToMany", "uris"}`` on stdin, the list of readings on stdout. The pay-to-many
text goes through the Send tab's own multi-line parser
(``PayToEdit._parse_as_multiline``) with the default display unit, BTC (8
decimals); only the widgets it updates around the parse are stand-ins.
"""

import json
import sys
from types import SimpleNamespace

from electrum import constants
from electrum.gui.qt.paytoedit import PayToEdit
from electrum.util import parse_URI

NETWORKS = {
    "mainnet": constants.set_mainnet,
    "testnet": constants.set_testnet,
    "signet": constants.set_signet,
    "regtest": constants.set_regtest,
}
BTC_DECIMAL_POINT = 8  # Electrum's default base unit, BTC


def pay_to_many(text: str) -> dict:
    widgets = SimpleNamespace(
        set_onchain=lambda on: None,
        max_button=SimpleNamespace(setChecked=lambda on: None, isChecked=lambda: False),
        lock_amount=lambda locked: None,
        spend_max=lambda: None,
    )
    edit = SimpleNamespace(
        errors=[],
        send_tab=widgets,
        amount_edit=SimpleNamespace(decimal_point=lambda: BTC_DECIMAL_POINT, setAmount=lambda total: None),
    )
    for name in ("parse_address_and_amount", "parse_output", "parse_script", "parse_amount", "parse_address"):
        setattr(edit, name, getattr(PayToEdit, name).__get__(edit))
    # As PayToEdit._check_text does for several lines: empty lines are dropped.
    lines = [line for line in text.split("\n") if line]
    PayToEdit._parse_as_multiline(edit, lines, raise_errors=False)
    return {
        "outputs": [[o.scriptpubkey.hex(), o.value] for o in edit.outputs],
        "errors": [f"Line #{e.idx + 1}: {e.line_content} ({e.exc})" for e in edit.errors],
    }


def read(request: dict) -> dict:
    NETWORKS[request["network"]]()
    uris = []
    for uri in request.get("uris", []):
        parsed = parse_URI(uri)
        uris.append({key: parsed.get(key) for key in ("address", "amount", "label", "message")})
    return {"payToMany": pay_to_many(request.get("payToMany", "")), "uris": uris}


def main() -> None:
    json.dump([read(request) for request in json.load(sys.stdin)], sys.stdout)


if __name__ == "__main__":
    main()

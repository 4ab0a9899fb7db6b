"""Transaction template and PDF of a draft."""

import json
import shlex
import subprocess
from decimal import Decimal

import pytest

from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES

pytestmark = pytest.mark.django_db


def test_the_tx_template_lists_receiver_and_fee_outputs_that_sum_to_the_total(api_client, create):
    draft = create({"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 10_000_000}).json()
    template = api_client.get(f"/api/v1/drafts/{draft['id']}/tx-template").json()
    assert template["draftId"] == draft["id"] and template["network"] == "Mainnet"
    outputs = template["outputs"]
    assert [(o["address"], o["amountSats"], o["purpose"]) for o in outputs] == [
        (ADDRESSES["Mainnet"], 10_000_000, "Receiver"),
        (FEE_ADDRESSES["Mainnet"], draft["platformFeeSats"], "PlatformFee"),
    ]
    assert sum(o["amountSats"] for o in outputs) == draft["amountSats"] + draft["platformFeeSats"]
    words = shlex.split(template["bitcoinCli"])
    assert words[:2] == ["bitcoin-cli", "walletcreatefundedpsbt"] and json.loads(words[2]) == []
    cli_outputs = json.loads(words[3], parse_float=Decimal)
    assert cli_outputs == [
        {ADDRESSES["Mainnet"]: Decimal("0.10000000")},
        {FEE_ADDRESSES["Mainnet"]: Decimal(draft["platformFeeSats"]) / 10**8},
    ]
    lines = template["payToManyCsv"].strip().splitlines()
    assert lines[0] == f"{ADDRESSES['Mainnet']},0.10000000" and len(lines) == 2
    assert template["payToManyUnit"] == "BTC"
    assert template["psbt"].startswith("cHNidP8B") and template["psbtV2"].startswith("cHNidP8B")


def test_a_non_bitcoin_draft_has_no_tx_template(api_client, create):
    draft = create(
        {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 1}
    ).json()
    response = api_client.get(f"/api/v1/drafts/{draft['id']}/tx-template")
    assert response.status_code == 409 and response.json()["code"] == "tx_template_not_applicable"


def test_the_receiver_cannot_be_the_operators_fee_address(create):
    response = create({"network": "Mainnet", "receiverAddress": FEE_ADDRESSES["Mainnet"], "amountSats": 100_000})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "receiverAddress"


def test_the_pdf_is_a_real_pdf_with_the_amount_and_address(api_client, create, tmp_path):
    draft = create(
        {
            "network": "Ethereum",
            "currency": "USDC",
            "receiverAddress": ADDRESSES["Ethereum"],
            "amountSats": 12_345_678,
            "memo": "Invoice 77",
        }
    ).json()
    response = api_client.get(f"/api/v1/drafts/{draft['id']}/pdf")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    pdf = tmp_path / "draft.pdf"
    pdf.write_bytes(response.content)
    assert response.content.startswith(b"%PDF-")
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert "12.345678" in text and ADDRESSES["Ethereum"] in text.replace("\n", "").replace(" ", "")

"""A receiving wallet's addresses, checked against BDK, and what a payer gets of a draft paid at
one: the tx-template, its PSBT (the outputs only: nothing of the merchant's keys), the BIP21
URI and the PDF all name the derived address."""

from __future__ import annotations

import base64
import json
import subprocess

import bdkpython as bdk
import pytest
from embit.psbt import PSBT

from wallets.descriptors import derive_addresses, parse_receiving_descriptor

TPUB = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"
KEY = f"[73c5da0a/84h/1h/0h]{TPUB}/0/*"
DESCRIPTORS = {"wpkh": f"wpkh({KEY})", "tr": f"tr({KEY})", "sh-wpkh": f"sh(wpkh({KEY}))"}
BDK_NETWORKS = {"Testnet": bdk.Network.TESTNET4, "Regtest": bdk.Network.REGTEST, "Signet": bdk.Network.SIGNET}


def bdk_addresses(descriptor: str, network: str, count: int = 5) -> list[str]:
    wallet = bdk.Wallet.create_single(
        bdk.Descriptor(descriptor, bdk.NetworkKind.TEST), BDK_NETWORKS[network], bdk.Persister.new_in_memory()
    )
    return [str(wallet.peek_address(bdk.KeychainKind.EXTERNAL, i).address) for i in range(count)]


@pytest.mark.parametrize("network", sorted(BDK_NETWORKS))
@pytest.mark.parametrize("kind", sorted(DESCRIPTORS))
def test_derived_addresses_are_bdks(kind, network):
    parsed = parse_receiving_descriptor(DESCRIPTORS[kind], network=network)
    assert parsed.script_type == kind
    ours = derive_addresses(parsed.descriptor, network=network, count=5)
    assert ours == bdk_addresses(parsed.descriptor, network)
    assert len(set(ours)) == 5


@pytest.mark.django_db
def test_the_tx_template_uri_and_pdf_name_the_derived_address_and_the_psbt_nothing_of_the_keys(
    api_client, settings, tmp_path
):
    settings.PLATFORM_FEE_ADDRESSES = {"Testnet": "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7"}
    wallet = api_client.post(
        "/api/v1/receiving-wallets", {"network": "Testnet", "descriptor": DESCRIPTORS["wpkh"]}, format="json"
    ).json()
    for expected in ("tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl", "tb1qd7spv5q28348xl4myc8zmh983w5jx32cjhkn97"):
        body = {"network": "Testnet", "receivingWalletId": wallet["id"], "amountSats": 250_000}
        draft = api_client.post("/api/v1/drafts", body, format="json").json()
        assert draft["paymentUri"].startswith(f"bitcoin:{expected}?amount=0.0025")
        template = api_client.get(f"/api/v1/drafts/{draft['id']}/tx-template").json()
        assert template["outputs"][0]["address"] == expected and template["outputs"][0]["amountSats"] == 250_000
        v2 = PSBT.from_base64(template["psbtV2"])  # embit reads the v2 form, BDK the v0 one
        assert not v2.xpubs and not any(out.bip32_derivations or out.taproot_bip32_derivations for out in v2.outputs)
        v0 = json.loads(bdk.Psbt(template["psbt"]).json_serialize())
        assert not v0.get("xpub") and [(o["bip32_derivation"], o["tap_key_origins"]) for o in v0["outputs"]] == [
            ([], [])
        ] * len(v0["outputs"])
        for form in ("psbt", "psbtV2"):
            assert bytes.fromhex("73c5da0a") not in base64.b64decode(template[form])  # no key origin
        pdf = api_client.get(f"/api/v1/drafts/{draft['id']}/pdf")
        assert pdf.status_code == 200
        path = tmp_path / "draft.pdf"
        path.write_bytes(b"".join(pdf.streaming_content) if pdf.streaming else pdf.content)
        text = subprocess.run(["pdftotext", "-raw", str(path), "-"], check=True, capture_output=True, text=True).stdout
        assert expected in "".join(text.split())

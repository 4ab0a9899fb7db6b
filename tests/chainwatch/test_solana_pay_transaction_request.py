"""The Solana Pay transaction request of a draft: decoded with solders, signed as a wallet
would, executed in LiteSVM (an in-process Solana runtime with the SPL Token program, through
solana_pay_litesvm.js) and recognised by the Solana watcher from the executed effects."""

from __future__ import annotations

import base64
import json
import struct
import subprocess
from pathlib import Path

import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import ID as SYSTEM_PROGRAM
from solders.token.associated import get_associated_token_address
from solders.transaction import Transaction

from chainwatch.models import ObservedTransfer
from chainwatch.solana import TOKEN_PROGRAM
from drafts.enums import DraftStatus
from payments.enums import Currency
from payments.registry import get_asset
from payments.uris import new_solana_reference
from tests.chainwatch.test_solana import RECEIVER, sol_draft, watch

pytestmark = pytest.mark.django_db

SCRIPT = Path(__file__).with_name("solana_pay_litesvm.js")
USDC_MINT = get_asset("USDC", "Solana").token_address


def litesvm(payload: dict) -> dict:
    done = subprocess.run(
        ["node", str(SCRIPT)], input=json.dumps(payload), capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout)


def url_of(draft) -> str:
    return f"/api/v1/solana-pay/{draft.id}"


def request_transaction(client, draft, payer: Keypair) -> dict:
    response = client.post(url_of(draft), {"account": str(payer.pubkey())}, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Content-Type"].startswith("application/json")
    return response.json()


@pytest.fixture
def runtime_blockhash(solana):
    solana.blockhash = litesvm({"mode": "blockhash"})["blockhash"]
    return solana.blockhash


def metas(tx: Transaction, instruction) -> list[tuple[str, bool, bool]]:
    """(key, signer, writable) of each account of the instruction, read from the message header."""
    message, header = tx.message, tx.message.header
    keys, signers = message.account_keys, header.num_required_signatures

    def writable(i: int) -> bool:
        if i < signers:
            return i < signers - header.num_readonly_signed_accounts
        return i < len(keys) - header.num_readonly_unsigned_accounts

    return [(str(keys[i]), message.is_signer(i), writable(i)) for i in bytes(instruction.accounts)]


def test_an_spl_draft_is_paid_by_the_transaction_its_request_answers(client, owner, solana, runtime_blockhash):
    draft = sol_draft(
        owner, currency=Currency.USDC, amount_base_units=25_000_000, solana_reference=new_solana_reference()
    )
    payer = Keypair()
    answer = request_transaction(client, draft, payer)
    assert answer["message"].strip()

    tx = Transaction.from_bytes(base64.b64decode(answer["transaction"]))
    message = tx.message
    assert message.account_keys[0] == payer.pubkey()  # the fee payer
    assert str(message.recent_blockhash) == runtime_blockhash
    assert len(message.instructions) == 1
    instruction = message.instructions[0]
    assert str(message.account_keys[instruction.program_id_index]) == TOKEN_PROGRAM
    kind, amount, decimals = struct.unpack("<BQB", bytes(instruction.data))
    assert (kind, amount, decimals) == (12, 25_000_000, 6)  # TransferChecked, exactly the draft, USDC's decimals
    mint = Pubkey.from_string(USDC_MINT)
    payer_ata = get_associated_token_address(payer.pubkey(), mint)
    receiver_ata = get_associated_token_address(Pubkey.from_string(RECEIVER), mint)
    assert metas(tx, instruction) == [
        (str(payer_ata), False, True),
        (USDC_MINT, False, False),
        (str(receiver_ata), False, True),
        (str(payer.pubkey()), True, True),  # the owner signs; writable as the fee payer
        (draft.solana_reference, False, False),  # the reference: read-only, not a signer
    ]

    tx.sign([payer], message.recent_blockhash)
    effects = litesvm(
        {
            "mode": "execute",
            "transaction": base64.b64encode(bytes(tx)).decode(),
            "payer": str(payer.pubkey()),
            "mint": USDC_MINT,
            "decimals": 6,
            "tokenAccounts": [
                {"address": str(payer_ata), "owner": str(payer.pubkey()), "amount": "100000000"},
                {"address": str(receiver_ata), "owner": RECEIVER, "amount": "7"},
            ],
        }
    )
    assert effects["err"] is None, effects["logs"]
    assert any(TOKEN_PROGRAM in line for line in effects["logs"]), effects["logs"]
    moved = {
        b["owner"]: int(b["amount"]) - int(a["amount"])
        for a, b in zip(effects["preTokenBalances"], effects["postTokenBalances"], strict=True)
    }
    assert moved == {RECEIVER: 25_000_000, str(payer.pubkey()): -25_000_000}

    signature = solana.add_executed(draft.solana_reference, effects)
    solana.finalize(signature)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_id == signature
    assert ObservedTransfer.objects.get(txid=signature).amount_base_units == 25_000_000


def test_a_sol_draft_is_paid_by_a_system_transfer_from_the_payer(client, owner, solana, runtime_blockhash):
    draft = sol_draft(owner, amount_base_units=1_500_000_000, solana_reference=new_solana_reference())
    payer = Keypair()
    tx = Transaction.from_bytes(base64.b64decode(request_transaction(client, draft, payer)["transaction"]))
    message = tx.message
    assert message.account_keys[0] == payer.pubkey() and len(message.instructions) == 1
    instruction = message.instructions[0]
    assert message.account_keys[instruction.program_id_index] == SYSTEM_PROGRAM
    assert struct.unpack("<IQ", bytes(instruction.data)) == (2, 1_500_000_000)  # Transfer, exactly the draft
    assert metas(tx, instruction) == [
        (str(payer.pubkey()), True, True),
        (RECEIVER, False, True),
        (draft.solana_reference, False, False),
    ]

    tx.sign([payer], message.recent_blockhash)
    effects = litesvm(
        {"mode": "execute", "transaction": base64.b64encode(bytes(tx)).decode(), "payer": str(payer.pubkey())}
    )
    assert effects["err"] is None, effects["logs"]
    signature = solana.add_executed(draft.solana_reference, effects)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_id == signature


def test_get_answers_the_label_and_icon_and_the_draft_json_names_the_request(client, owner, solana, settings):
    settings.PAYMENT_URI_LABEL = "Corner Shop"
    draft = sol_draft(owner, solana_reference=new_solana_reference())
    response = client.get(url_of(draft))
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    body = response.json()
    assert body["label"] == "Corner Shop" and body["icon"].startswith(settings.BASE_URL)
    assert client.options(url_of(draft))["Access-Control-Allow-Origin"] == "*"

    from drafts.presenters import draft_json

    assert draft_json(draft)["transactionRequestUrl"] == f"solana:{settings.BASE_URL}{url_of(draft)}"


@pytest.mark.parametrize("account", ["", "not-a-key", "0OIl" * 11, 12])
def test_an_account_that_is_not_a_base58_key_is_refused_naming_account(client, owner, solana, account):
    draft = sol_draft(owner, solana_reference=new_solana_reference())
    response = client.post(url_of(draft), {"account": account}, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert [e["field"] for e in response.json()["errors"]] == ["account"]


def test_a_draft_not_pending_is_refused(client, owner, solana):
    draft = sol_draft(owner, solana_reference=new_solana_reference(), status=DraftStatus.EXPIRED)
    response = client.post(url_of(draft), {"account": str(Keypair().pubkey())}, content_type="application/json")
    assert response.status_code == 409 and response.json()["code"] == "invalid_state"


def test_a_draft_on_another_chain_has_no_transaction_request(client, owner, solana):
    from tests.factories import make_draft

    draft = make_draft(owner)  # USDC on Ethereum
    response = client.post(url_of(draft), {"account": str(Keypair().pubkey())}, content_type="application/json")
    assert response.status_code == 404
    assert client.get(url_of(draft)).status_code == 404


def test_a_solana_node_down_is_a_503_with_retry_after(client, owner, solana, settings):
    settings.CHAINWATCH_ENDPOINTS = {"Solana": {"rpc_url": "http://127.0.0.1:9/"}}
    draft = sol_draft(owner, solana_reference=new_solana_reference())
    response = client.post(url_of(draft), {"account": str(Keypair().pubkey())}, content_type="application/json")
    assert response.status_code == 503 and int(response["Retry-After"]) >= 1


def test_the_request_is_on_the_payers_per_address_budget_like_the_pay_pages(client, owner, solana, settings):
    settings.CHECKOUT_RATE_LIMITS = {"read": "2/min", "write": "2/min"}
    draft = sol_draft(owner, solana_reference=new_solana_reference())

    answers = [client.get(url_of(draft)) for _ in range(3)]

    assert [a.status_code for a in answers] == [200, 200, 429]
    assert int(answers[-1]["Retry-After"]) >= 1

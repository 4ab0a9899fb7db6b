"""End to end through MCP alone: a draft created with the create_draft tool is paid on a
real Ethereum node (anvil), seen and confirmed by the watcher, and read back with
get_draft_status from the MCP server process."""

import json

import pytest

from chainwatch.tasks import chainwatch_run
from tests.mcp.conftest import call_tool

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

OPERATOR = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"


def test_a_draft_created_over_mcp_is_confirmed_by_a_payment_on_anvil(ethereum, mcp_server_with, make_key):
    # The server process sees the test token as USDC on Ethereum, as the in-process watcher does.
    url = mcp_server_with(
        TOKEN_ADDRESSES=json.dumps({"USDC": {"Ethereum": ethereum.token.address}}),
        FEE_ADDRESS_ETHEREUM=OPERATOR,
    )
    key = make_key("drafts:read", "drafts:write", "fees:read", "fees:write")
    receiver = ethereum.new_address()
    chainwatch_run("Ethereum", "evm")  # the watcher starts before the payment, as in production

    created = call_tool(
        url,
        key,
        "create_draft",
        {
            "network": "Ethereum",
            "currency": "USDC",
            "receiverAddress": receiver,
            "amountSats": 12_500_000,
            "requiredConfirmations": 3,
            "idempotencyKey": "order-7",
        },
    )
    assert not created.is_error, created.structured_content
    draft = created.structured_content
    assert draft["tokenAddress"] == ethereum.token.address

    tx = ethereum.pay_token(ethereum.token, receiver, 12_500_000)
    ethereum.mine(1)
    chainwatch_run("Ethereum", "evm")
    seen = call_tool(url, key, "get_draft_status", {"id": draft["id"]}).structured_content
    assert seen["status"] == "Seen" and seen["txId"] == tx

    ethereum.mine(2)
    chainwatch_run("Ethereum", "evm")
    confirmed = call_tool(url, key, "get_draft_status", {"id": draft["id"]}).structured_content
    assert confirmed["status"] == "Confirmed" and confirmed["txId"] == tx and confirmed["confirmations"] >= 3

    # The confirmed payment accrued its fee; the agent settles it with one more draft.
    balance = call_tool(url, key, "get_accrued_fees").structured_content
    assert balance["draftCount"] == 1 and balance["outstandingUsd"] == draft["platformFee"]["feeUsd"]
    settlement = call_tool(url, key, "settle_accrued_fees", {"currency": "USDC", "network": "Ethereum"})
    assert not settlement.is_error, settlement.structured_content
    assert settlement.structured_content["isFeeSettlement"] is True
    assert settlement.structured_content["receiverAddress"] == OPERATOR
    again = call_tool(url, key, "settle_accrued_fees", {"currency": "USDC", "network": "Ethereum"})
    assert again.is_error and again.structured_content["status"] == 409

"""The test helpers as MCP tools, through the SDK's own client against a real server process."""

from __future__ import annotations

import pytest

from tests.drafts.conftest import ADDRESSES
from tests.mcp.conftest import call_tool

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SEPOLIA = {"network": "Sepolia", "currency": "USDC", "receiverAddress": ADDRESSES["Sepolia"], "amountSats": 5_000_000}


def test_an_agent_pays_reorgs_and_expires_test_drafts(mcp_url, make_key):
    key = make_key("drafts:read", "drafts:write", livemode=False)
    draft = call_tool(mcp_url, key, "create_draft", SEPOLIA).structured_content
    assert draft["livemode"] is False

    seen = call_tool(mcp_url, key, "test_pay_draft", {"id": draft["id"], "outcome": "exact", "confirmations": 0})
    assert not seen.is_error, seen.structured_content
    assert seen.structured_content["status"] == "Seen"
    reverted = call_tool(mcp_url, key, "test_reorg_draft", {"id": draft["id"]}).structured_content
    assert reverted["status"] == "Pending"
    confirmed = call_tool(mcp_url, key, "test_pay_draft", {"id": draft["id"]}).structured_content
    assert confirmed["status"] == "Confirmed"

    other = call_tool(mcp_url, key, "create_draft", SEPOLIA | {"amountSats": 6_000_000}).structured_content
    expired = call_tool(mcp_url, key, "test_expire_draft", {"id": other["id"]}).structured_content
    assert expired["status"] == "Expired"

    bad = call_tool(mcp_url, key, "test_pay_draft", {"id": other["id"], "outcome": "sideways"})
    assert bad.is_error


def test_a_live_key_is_refused_by_the_test_tools(mcp_url, make_key):
    key = make_key("drafts:read", "drafts:write")
    draft = call_tool(mcp_url, key, "create_draft", SEPOLIA | {"amountSats": 7_000_000}).structured_content
    refused = call_tool(mcp_url, key, "test_pay_draft", {"id": draft["id"]})
    assert refused.is_error and refused.structured_content["code"] == "test_mode_only"


def test_an_agent_takes_a_test_refund_to_paid_and_never_sees_a_live_one(mcp_url, make_key):
    from drafts.models import Draft
    from refunds.services import refund_claim
    from tests.refunds.conftest import CUSTOMER, pay

    live_key, key = make_key(), make_key(livemode=False)
    live_draft = call_tool(mcp_url, live_key, "create_draft", SEPOLIA | {"amountSats": 8_000_000}).structured_content
    pay(Draft.objects.get(pk=live_draft["id"]))  # a live draft paid as a watcher would see it
    live = call_tool(mcp_url, live_key, "create_refund", {"draftId": live_draft["id"], "full": True}).structured_content
    assert live["livemode"] is True

    draft = call_tool(mcp_url, key, "create_draft", SEPOLIA | {"amountSats": 9_000_000}).structured_content
    call_tool(mcp_url, key, "test_pay_draft", {"id": draft["id"]})
    refund = call_tool(mcp_url, key, "create_refund", {"draftId": draft["id"], "full": True}).structured_content
    assert refund["livemode"] is False
    assert [r["id"] for r in call_tool(mcp_url, key, "list_refunds", {}).structured_content["items"]] == [refund["id"]]
    for tool in ("get_refund", "approve_refund", "cancel_refund"):
        hidden = call_tool(mcp_url, key, tool, {"id": live["id"]})
        assert hidden.is_error and hidden.structured_content["status"] == 404, (tool, hidden.structured_content)

    refund_claim(token=refund["claimUrl"].rsplit("/", 1)[1], refund_address=CUSTOMER["Ethereum"])
    approved = call_tool(mcp_url, key, "approve_refund", {"id": refund["id"]}).structured_content
    paid = call_tool(mcp_url, key, "test_pay_draft", {"id": approved["payout"]["draftId"]})
    assert not paid.is_error and paid.structured_content["status"] == "Confirmed", paid.structured_content
    assert call_tool(mcp_url, key, "get_refund", {"id": refund["id"]}).structured_content["status"] == "Paid"

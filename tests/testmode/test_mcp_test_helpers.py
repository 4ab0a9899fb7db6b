"""The test helpers as MCP tools, through the SDK's own client against a real server process."""

from __future__ import annotations

import pytest

from tests.drafts.conftest import ADDRESSES
from tests.mcp.conftest import call_tool, mcp_url  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SEPOLIA = {"network": "Sepolia", "currency": "USDC", "receiverAddress": ADDRESSES["Sepolia"], "amountSats": 5_000_000}


def test_an_agent_pays_reorgs_and_expires_test_drafts(mcp_url, make_key):  # noqa: F811
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


def test_a_live_key_is_refused_by_the_test_tools(mcp_url, make_key):  # noqa: F811
    key = make_key("drafts:read", "drafts:write")
    draft = call_tool(mcp_url, key, "create_draft", SEPOLIA | {"amountSats": 7_000_000}).structured_content
    refused = call_tool(mcp_url, key, "test_pay_draft", {"id": draft["id"]})
    assert refused.is_error and refused.structured_content["code"] == "test_mode_only"

"""An agent that knows only the service's address reads /llms.txt and, through /mcp alone,
creates a draft, fetches its transaction template and watches its status."""

import re
import urllib.parse

import pytest
from django.test import override_settings

from tests.drafts.conftest import ADDRESSES
from tests.mcp.conftest import in_session

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_an_agent_reading_only_llms_txt_creates_a_draft_fetches_the_template_and_watches_it(
    mcp_url, anon_client, make_key
):
    base = mcp_url.removesuffix("/mcp")
    with override_settings(BASE_URL=base):  # the address the operator published
        guide = anon_client.get("/llms.txt").content.decode()

    endpoint = re.search(r"^- Endpoint: (\S+)", guide, re.M).group(1)
    assert urllib.parse.urlsplit(endpoint).path == "/mcp"
    assert "Authorization: Bearer" in guide
    scopes = dict(re.findall(r"^- `(\w+)` \(scope ([\w:]+)\)", guide, re.M))
    flow = ["create_draft", "get_tx_template", "get_draft_status"]
    key = make_key(*sorted({scopes[name] for name in flow}))

    async def agent(session):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(flow) <= set(tools)
        wanted = set(tools["create_draft"].input_schema["properties"])
        arguments = {"network": "Testnet", "receiverAddress": ADDRESSES["Testnet"], "amountSats": 250_000}
        assert set(arguments) <= wanted
        draft = (await session.call_tool("create_draft", arguments)).structured_content
        template = (await session.call_tool("get_tx_template", {"id": draft["id"]})).structured_content
        status = (await session.call_tool("get_draft_status", {"id": draft["id"]})).structured_content
        return draft, template, status

    draft, template, status = in_session(endpoint, key, agent)
    assert draft["currency"] == "BTC" and draft["paymentMethod"] == "MultiOutput"
    assert template["draftId"] == draft["id"]
    assert template["outputs"][0]["address"] == ADDRESSES["Testnet"]
    assert "walletcreatefundedpsbt" in template["bitcoinCli"]
    assert status["id"] == draft["id"] and status["status"] == "Pending"
    assert status["txId"] is None and status["confirmations"] == 0

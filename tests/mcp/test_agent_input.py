"""What an agent naturally sends: fiat amounts as JSON numbers with or without cents, through the
official MCP SDK client, reach the REST parsers exactly (never as binary floats)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from drafts.models import Draft
from tests.drafts.conftest import ADDRESSES
from tests.mcp.conftest import in_session

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

AMOUNTS = (19.99, 20, 10.0, 0.1)
BASE = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "fiatCurrency": "EUR"}


def calls(url: str, key: str, name: str, argument_sets: list[dict]) -> list:
    async def work(session):
        await session.list_tools()
        return [await session.call_tool(name, arguments) for arguments in argument_sets]

    return in_session(url, key, work)


def test_create_draft_takes_every_fiat_amount_exactly(mcp_url, make_key):
    key = make_key("drafts:read", "drafts:write")
    results = calls(mcp_url, key, "create_draft", [BASE | {"fiatAmount": amount} for amount in AMOUNTS])
    for amount, result in zip(AMOUNTS, results, strict=True):
        assert not result.is_error, (amount, result.structured_content)
        assert result.structured_content["fiatAmount"] == amount
        stored = Draft.objects.get(pk=result.structured_content["id"]).fiat_amount
        assert stored == Decimal(repr(amount))  # 19.99 exactly, not 19.989999999999998436805981327779591083526611328125


def test_create_drafts_batch_takes_every_fiat_amount(mcp_url, make_key):
    key = make_key("drafts:read", "drafts:write")
    items = [{"draft": BASE | {"fiatAmount": amount}} for amount in AMOUNTS]
    (result,) = calls(mcp_url, key, "create_drafts_batch", [{"items": items}])
    assert not result.is_error, result.structured_content
    for amount, item in zip(AMOUNTS, result.structured_content["result"], strict=True):
        assert item["error"] is None, (amount, item)
        assert item["draft"]["fiatAmount"] == amount


def test_quote_fee_takes_every_fiat_amount(mcp_url, make_key):
    key = make_key("fees:read")
    quote = {"network": "Base", "currency": "USDC", "fiatCurrency": "EUR"}
    results = calls(mcp_url, key, "quote_fee", [quote | {"fiatAmount": amount} for amount in AMOUNTS])
    for amount, result in zip(AMOUNTS, results, strict=True):
        assert not result.is_error, (amount, result.structured_content)


def test_create_payment_request_takes_every_fiat_amount(mcp_url, make_key):
    key = make_key("paylinks:read", "paylinks:write")
    option = {"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]}
    bodies = [{"fiatCurrency": "EUR", "fiatAmount": amount, "options": [option]} for amount in AMOUNTS]
    results = calls(mcp_url, key, "create_payment_request", bodies)
    for amount, result in zip(AMOUNTS, results, strict=True):
        assert not result.is_error, (amount, result.structured_content)
        assert result.structured_content["fiatAmount"] == amount


def test_a_number_that_is_no_number_is_still_refused_naming_the_field(mcp_url, make_key):
    key = make_key("drafts:read", "drafts:write")
    (result,) = calls(mcp_url, key, "create_draft", [BASE | {"fiatAmount": "19.99"}])
    assert result.is_error and result.structured_content["errors"][0]["field"] == "fiatAmount"

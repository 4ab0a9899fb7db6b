"""The tool schemas an agent reads in tools/list: valid JSON Schema 2020-12, every property
described, required fields named, enums, uuid ids and code patterns, and small enough to read."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from mcp_server.tools import TOOLS
from tests.mcp.conftest import in_session, raw_post

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

MAX_TOOLS_LIST_BYTES = 48 * 1024


def listed_tools(url: str, key: str) -> dict:
    async def work(session):
        return await session.list_tools()

    return {tool.name: tool for tool in in_session(url, key, work).tools}


def properties_of(schema, path: str = ""):
    """Every (path, property schema) at every depth."""
    if isinstance(schema, list):
        for item in schema:
            yield from properties_of(item, path)
    elif isinstance(schema, dict):
        for name, sub in (schema.get("properties") or {}).items():
            yield f"{path}.{name}", sub
            yield from properties_of(sub, f"{path}.{name}")
        for key, value in schema.items():
            if key != "properties":
                yield from properties_of(value, path)


def test_every_tool_schema_is_valid_json_schema_2020_12(mcp_url, make_key):
    tools = listed_tools(mcp_url, make_key(livemode=False))
    for name, tool in tools.items():
        Draft202012Validator.check_schema(tool.input_schema)  # raises SchemaError naming the fault
        assert tool.input_schema["type"] == "object", name
        assert tool.output_schema is not None, name  # every tool says what it answers
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.output_schema["type"] == "object", name
        for where, schema in properties_of(tool.input_schema):
            types = schema.get("type")
            if isinstance(types, list):
                assert len(types) == len(set(types)), (name, where, types)


def test_every_input_property_is_described_and_refs_are_inlined(mcp_url, make_key):
    tools = listed_tools(mcp_url, make_key(livemode=False))
    undescribed = [
        f"{name}{where}"
        for name, tool in tools.items()
        for where, schema in properties_of(tool.input_schema)
        if not schema.get("description")
    ]
    assert undescribed == []
    for tool in tools.values():
        assert "$ref" not in json.dumps(tool.input_schema)


def test_required_fields_enums_ids_and_codes_are_in_the_schemas(mcp_url, make_key):
    tools = listed_tools(mcp_url, make_key())
    for name in ("create_draft", "quote_fee"):
        schema = tools[name].input_schema
        assert {"network", "currency"} <= set(schema["required"]), name
        assert "Base" in schema["properties"]["network"]["enum"]
        assert "USDC" in schema["properties"]["currency"]["enum"]
        assert "Lightning" in schema["properties"]["paymentMethod"]["enum"]
    for name in ("create_draft", "quote_fee", "create_payment_request"):
        fiat = tools[name].input_schema["properties"]["fiatCurrency"]
        assert fiat["pattern"] == "^[A-Z]{3}$", name
    batch_draft = tools["create_drafts_batch"].input_schema["properties"]["items"]["items"]["properties"]["draft"]
    assert "create_draft" in batch_draft["description"]  # its fields are create_draft's, listed there once
    for name, tool in tools.items():
        if "id" in tool.input_schema["properties"]:
            assert tool.input_schema["properties"]["id"]["format"] == "uuid", name
    validator = Draft202012Validator(tools["create_draft"].input_schema)
    body = {"network": "Base", "currency": "USDC", "fiatCurrency": "EUR", "fiatAmount": 19.99, "receiverAddress": "0x"}
    assert list(validator.iter_errors(body)) == []
    assert sorted(e.validator for e in validator.iter_errors(body | {"fiatCurrency": "euro"})) == [
        "maxLength",
        "pattern",
    ]
    missing = sorted(e.message for e in validator.iter_errors({"fiatAmount": 20}))
    assert missing == ["'currency' is a required property", "'network' is a required property"]


def test_tools_list_for_a_key_with_every_scope_is_at_most_48_kb_as_sent(mcp_url, make_key):
    key = make_key(livemode=False)  # every scope, and a test key also sees the test helpers: every tool
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    status, _, body = raw_post(mcp_url, listing, {"Authorization": f"Bearer {key}"})
    assert status == 200, body[:500]
    assert len(json.loads(body)["result"]["tools"]) == len(TOOLS)
    assert len(body) <= MAX_TOOLS_LIST_BYTES, len(body)  # the response's bytes as the server sent them

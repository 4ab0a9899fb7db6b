"""The MCP tool answers what GET /api/v1/attention answers, through the official SDK client."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.attention.test_attention import paid
from tests.factories import make_draft
from tests.mcp.conftest import call_tool

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_get_attention_answers_the_rest_body(mcp_url, make_key, owner):
    draft = make_draft(owner)
    paid(draft, received=draft.amount_base_units * 95 // 100)
    key = make_key()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    rest = client.get("/api/v1/attention").json()

    result = call_tool(mcp_url, key, "get_attention")

    assert not result.is_error, result.structured_content
    assert result.structured_content == rest
    assert [item["kind"] for item in rest["items"]] == ["underpaid"]

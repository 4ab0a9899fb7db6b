"""The body of GET /api/v1/attention, shared by the REST view and the MCP tool."""

from __future__ import annotations

from typing import Any

from accounts.models import ApiKey
from attention.presenters import attention_json
from attention.selectors import ALL_SECTIONS, attention_of, sections_for_scopes


def attention_body(*, user, api_key: ApiKey | None) -> dict[str, Any]:
    """A key sees the sections its scopes read (attention.selectors.SECTION_SCOPES); a session all."""
    sections = sections_for_scopes(api_key.scopes) if api_key is not None else ALL_SECTIONS
    return attention_json(attention_of(user, sections=sections))

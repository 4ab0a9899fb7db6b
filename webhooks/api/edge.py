"""The body of the webhook list operation, shared by the REST view (webhooks.api.views) and the MCP tools."""

from __future__ import annotations

from core.api.pagination import paginate
from webhooks.api.serializers import (
    WebhookSerializer,
)
from webhooks.selectors import webhook_list


def webhook_page_json(*, user, query) -> dict:
    """GET /webhooks: one page of the account's endpoints; shared by REST and MCP."""
    page = paginate(webhook_list(user=user), query)
    return page.envelope(WebhookSerializer(page.items, many=True).data)

"""The bodies of the webhook operations the MCP tools share with the REST views (webhooks.api.views):
each takes the account and the parsed input and answers the REST body."""

from __future__ import annotations

from django.shortcuts import get_object_or_404

from core.api.pagination import paginate
from webhooks import endpoints
from webhooks.api.serializers import (
    CreateWebhookRequestSerializer,
    DeliverySerializer,
    WebhookCreatedSerializer,
    WebhookSerializer,
)
from webhooks.selectors import webhook_list


def webhook_page_json(*, user, query) -> dict:
    """GET /webhooks: one page of the account's endpoints; shared by REST and MCP."""
    page = paginate(webhook_list(user=user), query)
    return page.envelope(WebhookSerializer(page.items, many=True).data)


def webhook_of(*, user, webhook_id):
    return get_object_or_404(webhook_list(user=user), pk=webhook_id)


def webhook_create_json(*, user, body) -> dict:
    """POST /webhooks: the new endpoint with its signing secret (shown this once)."""
    data = CreateWebhookRequestSerializer(data=body)
    data.is_valid(raise_exception=True)
    webhook = endpoints.webhook_create(
        user=user, url=data.validated_data["url"], events=data.validated_data.get("events")
    )
    return WebhookCreatedSerializer(webhook).data


def webhook_delete_json(*, user, webhook_id) -> dict:
    """DELETE /webhooks/{id}: the deleted endpoint."""
    webhook = webhook_of(user=user, webhook_id=webhook_id)
    body = WebhookSerializer(webhook).data
    endpoints.webhook_delete(webhook=webhook)
    return body


def webhook_test_json(*, user, webhook_id) -> dict:
    """POST /webhooks/{id}/test: the delivery of a `test` event to this endpoint."""
    delivery = endpoints.webhook_send_test(webhook=webhook_of(user=user, webhook_id=webhook_id))
    return DeliverySerializer(delivery).data

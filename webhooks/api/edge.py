"""The bodies of the webhook operations the MCP tools share with the REST views (webhooks.api.views):
each takes the account and the parsed input and answers the REST body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from django.shortcuts import get_object_or_404

from accounts.models import User
from core.api.pagination import page_of, paginate
from core.problems import NotFound
from drafts.idempotency import Outcome, create_once
from webhooks import endpoints
from webhooks.api.serializers import (
    MAX_STREAM_LIMIT,
    CreateWebhookRequestSerializer,
    DeliveryListQuerySerializer,
    DeliverySerializer,
    EventListQuerySerializer,
    EventSerializer,
    EventStreamQuerySerializer,
    RedeliverEventRequestSerializer,
    RotateWebhookSecretRequestSerializer,
    UpdateWebhookRequestSerializer,
    WebhookCreatedSerializer,
    WebhookSerializer,
)
from webhooks.models import Delivery, Webhook
from webhooks.selectors import delivery_list, event_get, event_list, events_after, webhook_list


def webhook_page_json(*, user: User, query: Mapping[str, Any]) -> dict[str, Any]:
    """GET /webhooks: one page of the account's endpoints; shared by REST and MCP."""
    page = paginate(webhook_list(user=user), query)
    return page.envelope(WebhookSerializer(page.items, many=True).data)


def webhook_of(*, user: User, webhook_id: UUID | str | None) -> Webhook:
    return get_object_or_404(webhook_list(user=user), pk=webhook_id)


def webhook_create_json(*, user: User, body: Any) -> dict[str, Any]:
    """POST /webhooks: the new endpoint with its signing secret (shown this once)."""
    data = CreateWebhookRequestSerializer(data=body)
    data.is_valid(raise_exception=True)
    webhook = endpoints.webhook_create(
        user=user, url=data.validated_data["url"], events=data.validated_data.get("events")
    )
    return WebhookCreatedSerializer(webhook).data


def webhook_create_outcome(
    *, user: User, body: Any, idempotency_key: str | None, key_field: str = "Idempotency-Key"
) -> Outcome:
    """POST /webhooks once per Idempotency-Key (the answer, with its secret, kept encrypted)."""
    return create_once(
        user=user,
        key=idempotency_key,
        operation="webhook",
        body=body,
        make=lambda: webhook_create_json(user=user, body=body),
        key_field=key_field,
        secret=True,
    )


def webhook_delete_json(*, user: User, webhook_id: UUID | str | None) -> dict[str, Any]:
    """DELETE /webhooks/{id}: the deleted endpoint."""
    webhook = webhook_of(user=user, webhook_id=webhook_id)
    body = WebhookSerializer(webhook).data
    endpoints.webhook_delete(webhook=webhook)
    return body


def webhook_test_json(*, user: User, webhook_id: UUID | str | None) -> dict[str, Any]:
    """POST /webhooks/{id}/test: the delivery of a `test` event to this endpoint."""
    delivery = endpoints.webhook_send_test(webhook=webhook_of(user=user, webhook_id=webhook_id))
    return DeliverySerializer(delivery).data


def webhook_update_json(*, user: User, webhook_id: UUID | str | None, body: Any) -> dict[str, Any]:
    """PATCH /webhooks/{id}: a new URL or events, or the endpoint disabled or re-enabled."""
    webhook = webhook_of(user=user, webhook_id=webhook_id)
    data = UpdateWebhookRequestSerializer(data=body)
    data.is_valid(raise_exception=True)
    events = data.validated_data.get("events")
    webhook = endpoints.webhook_update(
        webhook=webhook,
        url=data.validated_data.get("url"),
        active=data.validated_data.get("active"),
        events=(events or []) if "events" in data.validated_data else None,
    )
    return WebhookSerializer(webhook).data


def webhook_rotate_secret_json(*, user: User, webhook_id: UUID | str | None, body: Any) -> dict[str, Any]:
    """POST /webhooks/{id}/rotate-secret: the endpoint with its new secret (shown this once)."""
    webhook = webhook_of(user=user, webhook_id=webhook_id)
    data = RotateWebhookSecretRequestSerializer(data=body)
    data.is_valid(raise_exception=True)
    webhook = endpoints.webhook_rotate_secret(webhook=webhook, overlap_hours=data.validated_data.get("overlapHours"))
    return WebhookCreatedSerializer(webhook).data


def delivery_page_json(*, user: User, webhook_id: UUID | str | None, query: Mapping[str, Any]) -> dict[str, Any]:
    """GET /webhooks/{id}/deliveries: one page of the endpoint's delivery log, newest first."""
    webhook = webhook_of(user=user, webhook_id=webhook_id)
    params = DeliveryListQuerySerializer(data=dict(query.items()))
    params.is_valid(raise_exception=True)
    filters = params.validated_data
    deliveries = delivery_list(webhook=webhook)
    if filters.get("status"):
        deliveries = deliveries.filter(status=filters["status"])
    page = page_of(deliveries, filters, within=delivery_list(webhook=webhook))
    return page.envelope(DeliverySerializer(page.items, many=True).data)


def delivery_redeliver_json(
    *, user: User, webhook_id: UUID | str | None, delivery_id: UUID | str | None
) -> dict[str, Any]:
    """POST /webhooks/{id}/deliveries/{deliveryId}/redeliver: the delivery, sent again."""
    delivery = get_object_or_404(Delivery, pk=delivery_id, webhook=webhook_of(user=user, webhook_id=webhook_id))
    delivery = endpoints.delivery_redeliver(delivery=delivery)
    return DeliverySerializer(delivery_list(webhook=delivery.webhook).get(pk=delivery.pk)).data


# --- Events -------------------------------------------------------------------------------


def event_page_json(*, user: User, query: Mapping[str, Any]) -> dict[str, Any]:
    """GET /events: one page of the account's events (the caller's mode), newest first."""
    params = EventListQuerySerializer(data=query)
    params.is_valid(raise_exception=True)
    filters = params.validated_data
    page = page_of(event_list(user=user, filters=filters), filters, within=event_list(user=user, filters={}))
    return page.envelope(EventSerializer(page.items, many=True).data)


def event_json(*, user: User, event_id: UUID | str | None) -> dict[str, Any]:
    """GET /events/{id}."""
    return EventSerializer(event_get(user=user, event_id=event_id)).data


def event_stream_json(*, user: User, query: Mapping[str, Any]) -> dict[str, Any]:
    """GET /events/stream: the events after a cursor, oldest first, waiting for one if asked."""
    params = EventStreamQuerySerializer(data=query)
    params.is_valid(raise_exception=True)
    given = params.validated_data
    found = events_after(
        user=user,
        after=given.get("startingAfter"),
        limit=MAX_STREAM_LIMIT,
        wait=given["wait"],
        types=given.get("type"),
    )
    cursor = found[-1].id if found else given.get("startingAfter")
    return {"items": EventSerializer(found, many=True).data, "next": str(cursor) if cursor else None}


def event_redeliver_json(*, user: User, event_id: UUID | str | None, body: Any) -> dict[str, Any]:
    """POST /events/{id}/redeliver: the deliveries sent again (or made, for a named endpoint)."""
    data = RedeliverEventRequestSerializer(data=body if body is not None else {})
    data.is_valid(raise_exception=True)
    event = event_get(user=user, event_id=event_id)
    webhook_id = data.validated_data.get("webhookId")
    webhook = None
    if webhook_id is not None:
        webhook = webhook_list(user=user).filter(pk=webhook_id).first()
        if webhook is None:
            raise NotFound("You have no endpoint with this id in this key's mode.", field="webhookId")
    deliveries = endpoints.event_redeliver(event=event, webhook=webhook)
    fresh = Delivery.objects.filter(pk__in=[d.pk for d in deliveries]).select_related("event")
    fresh = fresh.prefetch_related("attempts").order_by("created_at", "id")
    return {"eventId": str(event.id), "deliveries": DeliverySerializer(fresh, many=True).data}

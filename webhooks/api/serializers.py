from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework import serializers

from core.api.pagination import PageQuerySerializer, paged_envelope_serializer
from core.api.serializers import StrictBooleanField, StrictChoiceField, StrictIntegerField, StrictSerializer
from outbound import MAX_URL_LENGTH
from webhooks.models import DeliveryStatus, EventType, Webhook
from webhooks.selectors import STREAM_WAIT_MAX_SECONDS

MAX_OVERLAP_HOURS = 24 * 7


class EventTypesField(serializers.ListField):
    child = serializers.CharField()

    def to_internal_value(self, data: Any) -> list[str]:
        names = super().to_internal_value(data)
        unknown = sorted({name for name in names if name not in EventType.values})
        if unknown:
            raise serializers.ValidationError(
                f"Unknown event types: {', '.join(unknown)}. Known: {', '.join(EventType.values)}.",
                code="invalid_event_type",
            )
        return names


class CreateWebhookRequestSerializer(StrictSerializer):
    url = serializers.CharField(max_length=MAX_URL_LENGTH, trim_whitespace=False)
    events = EventTypesField(required=False, allow_null=True, allow_empty=True, max_length=len(EventType.values) * 2)


class UpdateWebhookRequestSerializer(StrictSerializer):
    url = serializers.CharField(
        max_length=MAX_URL_LENGTH,
        trim_whitespace=False,
        required=False,
        help_text="A new HTTPS URL, checked like a new registration",
    )
    active = StrictBooleanField(required=False)
    events = EventTypesField(required=False, allow_null=True, allow_empty=True, max_length=len(EventType.values) * 2)


class WebhookSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    url = serializers.CharField()
    events = serializers.SerializerMethodField()
    active = serializers.BooleanField()
    createdAt = serializers.DateTimeField(source="created_at")
    livemode = serializers.BooleanField(
        help_text="False for a test-mode endpoint: it gets only events of test objects."
    )
    previousSecretExpiresAt = serializers.SerializerMethodField(
        help_text="While a rotated-out secret still signs deliveries (beside the new one): until when; else null"
    )

    def get_previousSecretExpiresAt(self, webhook: Webhook) -> str | None:
        expires = webhook.previous_secret_expires_at
        if webhook.previous_secret_in_force(timezone.now()) is None or expires is None:
            return None
        return serializers.DateTimeField().to_representation(expires)

    def get_events(self, webhook: Webhook) -> list[str] | None:
        return list(webhook.events) or None


WebhookPageSerializer = paged_envelope_serializer("WebhookPage", WebhookSerializer)


class WebhookCreatedSerializer(WebhookSerializer):
    secret = serializers.CharField(help_text="Signing secret (whsec_...). Shown only in this response.")


class RotateWebhookSecretRequestSerializer(StrictSerializer):
    overlapHours = StrictIntegerField(
        min_value=0,
        max_value=MAX_OVERLAP_HOURS,
        required=False,
        allow_null=True,
        help_text="How long the replaced secret keeps signing beside the new one; 0 retires it now. "
        "Default: the WEBHOOKS_SECRET_OVERLAP_HOURS setting (24)",
    )


class DeliveryAttemptSerializer(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    state = serializers.CharField()
    at = serializers.DateTimeField(source="started_at", allow_null=True)
    statusCode = serializers.IntegerField(source="status_code", allow_null=True)
    durationMs = serializers.IntegerField(source="duration_ms", allow_null=True)
    error = serializers.CharField(allow_blank=True)


class DeliverySerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    webhookId = serializers.UUIDField(source="webhook_id")
    eventId = serializers.UUIDField(source="event_id")
    event = serializers.CharField(source="event.type")
    status = serializers.CharField()
    attempts = serializers.IntegerField(source="attempt_count")
    nextAttemptAt = serializers.DateTimeField(source="next_attempt_at", allow_null=True)
    deliveredAt = serializers.DateTimeField(source="delivered_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    attemptLog = DeliveryAttemptSerializer(source="attempts.all", many=True)


DeliveryPageSerializer = paged_envelope_serializer("DeliveryPage", DeliverySerializer)


class DeliveryListQuerySerializer(StrictSerializer, PageQuerySerializer):
    status = StrictChoiceField(
        choices=DeliveryStatus.choices, required=False, help_text="Only deliveries in this status"
    )


# --- Events -----------------------------------------------------------------------------------


class EventSerializer(serializers.Serializer[Any]):
    """An event as the API lists it: the body its deliveries carry, and its mode."""

    id = serializers.UUIDField()
    event = serializers.CharField(source="type", help_text="The event type (the delivery body's `event`)")
    createdAt = serializers.DateTimeField(source="created_at")
    objectId = serializers.UUIDField(
        source="object_id",
        allow_null=True,
        help_text="The object it reports: a draft, payment request, refund or transfer (a test event: the endpoint)",
    )
    sequence = serializers.IntegerField(
        help_text="1, 2, 3... over the object's events; a receiver ignores one lower than the last it applied"
    )
    livemode = serializers.BooleanField()
    # `data` (the event's data) is declared after the class: as a class attribute it would hide, for
    # the type checker, Serializer's `data` (the output); the metaclass takes declared fields off
    # the class either way, so the field and the output are the same as if declared here.


EventSerializer._declared_fields["data"] = serializers.JSONField()

EventPageSerializer = paged_envelope_serializer("EventPage", EventSerializer)


class EventListQuerySerializer(StrictSerializer, PageQuerySerializer):
    type = serializers.ChoiceField(choices=EventType.choices, required=False, help_text="Only events of this type")
    objectId = serializers.UUIDField(required=False, help_text="Only the events of this object (e.g. a draft id)")
    # "from" is a Python keyword: declared below (created at or after it, like GET /drafts).
    to = serializers.DateTimeField(required=False, help_text="Created at or before this time")


EventListQuerySerializer._declared_fields["from"] = serializers.DateTimeField(
    required=False, help_text="Created at or after this time"
)

MAX_STREAM_LIMIT = 100


class EventTypesQueryField(serializers.CharField):
    """Event types in a query parameter, separated by commas."""

    # A CharField on the wire (one query parameter) whose value, parsed, is the list of types:
    # CharField's stubs fix its value type to str.
    def to_internal_value(self, data: Any) -> list[str]:  # type: ignore[override]  # see above
        names = [name.strip() for name in super().to_internal_value(data).split(",") if name.strip()]
        return EventTypesField().to_internal_value(names)


class EventStreamQuerySerializer(StrictSerializer):
    startingAfter = serializers.UUIDField(
        required=False, help_text="The last event you have: the answer starts after it (default: the first event)"
    )
    wait = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=STREAM_WAIT_MAX_SECONDS,
        default=0,
        help_text="Seconds to wait for an event when none is there yet (long poll)",
    )
    type = EventTypesQueryField(required=False, max_length=200, help_text="Only these types, separated by commas")


class EventStreamSerializer(serializers.Serializer[Any]):
    items = EventSerializer(many=True, help_text="Oldest first")
    next = serializers.UUIDField(
        allow_null=True, help_text="Pass as startingAfter in the next call (the last item, else what you gave)"
    )


class RedeliverEventRequestSerializer(StrictSerializer):
    webhookId = serializers.UUIDField(
        required=False,
        allow_null=True,
        help_text="Send to this endpoint only (even one that never had the event); default: every endpoint that had it",
    )


class EventRedeliveredSerializer(serializers.Serializer[Any]):
    eventId = serializers.UUIDField()
    deliveries = DeliverySerializer(many=True)

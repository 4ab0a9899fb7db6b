from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import pgettext_lazy

from core.encryption import EncryptedTextField


class EventType(models.TextChoices):
    DRAFT_CREATED = "draft.created"
    DRAFT_SEEN = "draft.seen"
    DRAFT_CONFIRMED = "draft.confirmed"
    DRAFT_AMOUNT_MISMATCH = "draft.amount_mismatch"
    DRAFT_EXPIRED = "draft.expired"
    DRAFT_CANCELLED = "draft.cancelled"
    DRAFT_PAYMENT_REVERTED = "draft.payment_reverted"
    DRAFT_PAID_AGAIN = "draft.paid_again"
    TRANSFER_UNMATCHED = "transfer.unmatched"
    PAYMENT_REQUEST_PAID = "payment_request.paid"
    PAYMENT_REQUEST_EXPIRED = "payment_request.expired"
    REFUND_CREATED = "refund.created"
    REFUND_CLAIMED = "refund.claimed"
    REFUND_APPROVED = "refund.approved"
    REFUND_PAID = "refund.paid"
    REFUND_CANCELLED = "refund.cancelled"
    REFUND_EXPIRED = "refund.expired"
    TEST = "test"


# Events beyond the interface spec's list: sent only to endpoints that name them in `events`,
# so a receiver subscribed to "everything" keeps getting exactly what the spec promised.
# draft.payment_reverted and draft.paid_again are not among them: a payment that left the chain
# or came twice must reach every endpoint (docs/decisions.md).
OPT_IN_EVENT_TYPES = frozenset(
    {
        EventType.TRANSFER_UNMATCHED,
        EventType.REFUND_CREATED,
        EventType.REFUND_CLAIMED,
        EventType.REFUND_APPROVED,
        EventType.REFUND_PAID,
        EventType.REFUND_CANCELLED,
        EventType.REFUND_EXPIRED,
    }
)


# The object an event reports, by the data field naming it (draft.* events: their draft_id).
OBJECT_ID_FIELD = {
    "payment_request.": "paymentRequestId",
    "refund.": "refundId",
    "transfer.": "transferId",
    "test": "webhookId",
}
# Events that open their object's history: their sequence is 1 without a look-up.
FIRST_OF_OBJECT = frozenset({EventType.DRAFT_CREATED, EventType.REFUND_CREATED, EventType.TRANSFER_UNMATCHED})


def event_object_id(event_type: str, data: dict[str, Any] | None, draft_id: uuid.UUID | None) -> uuid.UUID | None:
    """The id of the object an event reports (the draft, payment request, refund, transfer, or
    the endpoint a test event tests); None when the data names none."""
    if event_type.startswith("draft."):
        value = draft_id or (data or {}).get("draftId")
    else:
        key = next((k for prefix, k in OBJECT_ID_FIELD.items() if event_type.startswith(prefix)), None)
        value = (data or {}).get(key) if key else None
    if value is None or isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


class Event(models.Model):
    """The transactional outbox: written in the same transaction as the change that causes it.

    `sequence` numbers the events of one object (`object_id`) 1, 2, 3...: each is written under
    the object's row lock (its state change), so a later event of an object has a higher one.
    Deliveries to one endpoint for one object go out in that order (webhooks.services)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="events")
    type = models.CharField(max_length=32, choices=EventType.choices)
    data = models.JSONField()
    draft_id = models.UUIDField(null=True, blank=True, db_index=True)
    object_id = models.UUIDField(null=True, blank=True)
    sequence = models.PositiveBigIntegerField(default=1)
    # An event of a test object goes only to the account's test endpoints (accounts.modes).
    livemode = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["object_id", "sequence"], name="webhooks_event_object_seq"),
            models.Index(fields=["user", "livemode", "created_at", "id"], name="webhooks_event_stream"),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.id}"


class Webhook(models.Model):
    """An endpoint an account registered. `events` empty means every event type."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2048)
    events = models.JSONField(default=list, blank=True)
    # Kept retrievable: it signs every delivery. Encrypted at rest (FIELD_ENCRYPTION_KEY), never
    # logged, never shown after creation.
    secret = EncryptedTextField()
    # After a rotation the replaced secret still signs (beside the new one) until it expires.
    previous_secret = EncryptedTextField(blank=True, default="")
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    active = models.BooleanField(default=True)
    # Deliveries that ended Failed in a row; reaching WEBHOOKS_DISABLE_AFTER_FAILED_DELIVERIES disables it.
    consecutive_failures = models.PositiveIntegerField(default=0)
    # Set when an attempt fails, cleared by a success: a failing endpoint gets one attempt in flight.
    last_failure_at = models.DateTimeField(null=True, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=200, blank=True, default="")
    livemode = models.BooleanField(default=True)  # accounts.modes: gets only events of its mode
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.url

    def wants(self, event_type: str) -> bool:
        if not self.events:
            return event_type not in OPT_IN_EVENT_TYPES
        return event_type in self.events

    def previous_secret_in_force(self, now: datetime) -> str | None:
        """The replaced secret while the rotation overlap lasts, else None."""
        if self.previous_secret and self.previous_secret_expires_at and now < self.previous_secret_expires_at:
            return self.previous_secret
        return None


class DeliveryStatus(models.TextChoices):
    PENDING = "Pending", pgettext_lazy("status", "Pending")
    SUCCEEDED = "Succeeded", pgettext_lazy("status", "Succeeded")
    FAILED = "Failed", pgettext_lazy("status", "Failed")


class Delivery(models.Model):
    """One event for one endpoint. Its id is X-Service-Delivery and webhook-id, stable across
    retries. The retry schedule lives here (next_attempt_at, attempt_count), not in the broker."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    # Attempts in the current round (a redelivery starts a new round of the same delivery).
    attempt_count = models.PositiveIntegerField(default=0)
    total_attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["webhook", "event"], name="webhooks_delivery_once_per_event")]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="webhooks_delivery_due",
                condition=models.Q(status="Pending"),
            )
        ]

    def __str__(self) -> str:
        return f"{self.event.type} -> {self.webhook_id} ({self.status})"


class AttemptState(models.TextChoices):
    CLAIMED = "Claimed"  # scheduled by a dispatcher, not yet sent
    SENDING = "Sending"  # a worker took it; the POST is (or was) under way
    DONE = "Done"
    INTERRUPTED = "Interrupted"  # the worker or the broker lost it; no result known


class DeliveryAttempt(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=AttemptState.choices, default=AttemptState.CLAIMED)
    claimed_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True, default="")
    response_excerpt = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="webhooks_attempt_number_unique")]
        indexes = [
            models.Index(fields=["state", "claimed_at"], name="webhooks_attempt_open"),
            models.Index(fields=["claimed_at"], name="webhooks_attempt_claimed_at"),  # retention
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}"

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

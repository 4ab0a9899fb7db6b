from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class EventType(models.TextChoices):
    DRAFT_CREATED = "draft.created"
    DRAFT_SEEN = "draft.seen"
    DRAFT_CONFIRMED = "draft.confirmed"
    DRAFT_AMOUNT_MISMATCH = "draft.amount_mismatch"
    DRAFT_EXPIRED = "draft.expired"
    DRAFT_CANCELLED = "draft.cancelled"
    TEST = "test"


class Event(models.Model):
    """The transactional outbox: written in the same transaction as the change that causes it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="events")
    type = models.CharField(max_length=32, choices=EventType.choices)
    data = models.JSONField()
    draft_id = models.UUIDField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.type} {self.id}"

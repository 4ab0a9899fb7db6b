"""Writes for events and webhook deliveries."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db import transaction

from webhooks.models import Event


def event_record(*, user, type: str, data: dict[str, Any], draft_id: UUID | None = None) -> Event:
    """Record an event in the caller's transaction (the outbox). Call it inside the
    transaction that makes the change the event reports, never after it."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("event_record must run inside the transaction of the change it reports")
    return Event.objects.create(user=user, type=type, data=data, draft_id=draft_id)

"""The overview's latest activity: the account's newest events (the outbox, webhooks.models.Event)
in the caller's mode, each worded for a merchant and linked to the object it reports."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from webhooks.models import Event, EventType
from webhooks.selectors import event_list

WORDS: dict[str, Promise] = {
    EventType.DRAFT_CREATED: _("Draft created"),
    EventType.DRAFT_SEEN: _("Payment seen"),
    EventType.DRAFT_CONFIRMED: _("Payment confirmed"),
    EventType.DRAFT_AMOUNT_MISMATCH: _("Payment of another amount"),
    EventType.DRAFT_EXPIRED: _("Draft expired"),
    EventType.DRAFT_CANCELLED: _("Draft cancelled"),
    EventType.DRAFT_PAYMENT_REVERTED: _("Payment reverted"),
    EventType.DRAFT_PAID_AGAIN: _("Paid again"),
    EventType.TRANSFER_UNMATCHED: _("Transfer that paid no draft"),
    EventType.PAYMENT_REQUEST_PAID: _("Pay link paid"),
    EventType.PAYMENT_REQUEST_EXPIRED: _("Pay link expired"),
    EventType.REFUND_CREATED: _("Refund created"),
    EventType.REFUND_CLAIMED: _("Refund claimed"),
    EventType.REFUND_APPROVED: _("Refund approved"),
    EventType.REFUND_PAID: _("Refund paid"),
    EventType.REFUND_CANCELLED: _("Refund cancelled"),
    EventType.REFUND_EXPIRED: _("Refund expired"),
}


@dataclass(frozen=True)
class Activity:
    at: datetime
    words: str
    type: str
    url: str | None


def _url(event: Event) -> str | None:
    family = event.type.split(".", 1)[0]
    if family == "draft" and (event.draft_id or event.object_id):
        return reverse("dashboard:draft", args=[event.draft_id or event.object_id])
    if family == "refund" and event.object_id:
        return reverse("dashboard:refund", args=[event.object_id])
    if family == "payment_request" and event.object_id:
        return reverse("dashboard:paylink", args=[event.object_id])
    if family == "transfer":
        return reverse("dashboard:transfers")
    return None


def latest_activity(*, user, limit: int = 8) -> list[Activity]:
    """The account's newest events in its current mode, newest first (test events excluded)."""
    events = event_list(user=user, filters={}).exclude(type=EventType.TEST)[:limit]
    return [Activity(at=e.created_at, words=str(WORDS.get(e.type, e.type)), type=e.type, url=_url(e)) for e in events]

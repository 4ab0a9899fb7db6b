"""Reads for webhook endpoints and their delivery log."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from accounts.modes import owned
from webhooks.models import Delivery, DeliveryAttempt, Webhook


def webhook_list(*, user) -> QuerySet[Webhook]:
    return owned(Webhook, user).order_by("-created_at")


def delivery_list(*, webhook: Webhook) -> QuerySet[Delivery]:
    return (
        Delivery.objects.filter(webhook=webhook)
        .select_related("event")
        .prefetch_related(Prefetch("attempts", queryset=DeliveryAttempt.objects.order_by("number")))
        .order_by("-created_at", "-id")
    )


def delivery_backlog(*, now) -> tuple[int, object]:
    """Deliveries still pending (due or waiting for a retry), and the due time of the oldest
    one due now to an active endpoint (None when none is due): read by /healthz."""
    from django.db.models import Min

    from webhooks.models import DeliveryStatus

    pending = Delivery.objects.filter(status=DeliveryStatus.PENDING)
    oldest = pending.filter(next_attempt_at__lte=now, webhook__active=True).aggregate(at=Min("next_attempt_at"))["at"]
    return pending.count(), oldest

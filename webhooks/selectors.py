"""Reads for webhook endpoints and their delivery log."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from webhooks.models import Delivery, DeliveryAttempt, Webhook


def webhook_list(*, user) -> QuerySet[Webhook]:
    return Webhook.objects.filter(user=user).order_by("-created_at")


def delivery_list(*, webhook: Webhook) -> QuerySet[Delivery]:
    return (
        Delivery.objects.filter(webhook=webhook)
        .select_related("event")
        .prefetch_related(Prefetch("attempts", queryset=DeliveryAttempt.objects.order_by("number")))
        .order_by("-created_at", "-id")
    )

"""Reads for payment requests."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.modes import owned
from paylinks.models import PayLinkPreference, PaymentRequest


def payment_request_get(*, user, payment_request_id: UUID) -> PaymentRequest:
    """One of the account's requests; another account's is a 404 like an unknown id."""
    return get_object_or_404(owned(PaymentRequest, user).select_related("draft"), pk=payment_request_id)


def payment_request_list(*, user, filters: dict[str, Any]) -> QuerySet[PaymentRequest]:
    """The account's requests, newest first, by status and orderId when given."""
    queryset = owned(PaymentRequest, user).select_related("draft")
    if filters.get("status"):
        queryset = queryset.filter(status=filters["status"])
    if filters.get("orderId"):
        queryset = queryset.filter(order_id=filters["orderId"])
    return queryset.order_by("-created_at", "-id")


def payment_request_by_token(*, token: str) -> PaymentRequest:
    """The request a pay link names; 404 for any other token."""
    return get_object_or_404(PaymentRequest.objects.select_related("draft", "user"), token=token)


def announces_checkout_drafts(*, user_id) -> bool:
    """Whether the account's pay-link checkout drafts send draft.created (and draft.cancelled
    when a payer switches): yes, unless it opted out."""
    return not PayLinkPreference.objects.filter(user_id=user_id, quiet_checkout_drafts=True).exists()

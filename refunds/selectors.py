"""Reads for refunds."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from refunds.models import Refund


def refund_get(*, user, refund_id: UUID) -> Refund:
    """One of the account's refunds; another account's is a 404 like an unknown id."""
    return get_object_or_404(Refund.objects.select_related("draft", "payout_draft"), pk=refund_id, user=user)


def refund_list(*, user, filters: dict[str, Any]) -> QuerySet[Refund]:
    """The account's refunds, newest first, by status and paid draft when given."""
    queryset = Refund.objects.filter(user=user).select_related("draft", "payout_draft")
    if filters.get("status"):
        queryset = queryset.filter(status=filters["status"])
    if filters.get("draftId"):
        queryset = queryset.filter(draft_id=filters["draftId"])
    return queryset.order_by("-created_at", "-id")


def refund_by_token(*, token: str) -> Refund:
    """The refund a claim link names; 404 for any other token."""
    return get_object_or_404(Refund.objects.select_related("draft", "payout_draft", "user"), token=token)

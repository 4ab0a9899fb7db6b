"""Reads for refunds."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.modes import owned
from refunds.models import Refund


def refund_get(*, user, refund_id: UUID) -> Refund:
    """One of the account's refunds in the caller's mode; another account's, or one of the
    other mode, is a 404 like an unknown id."""
    return get_object_or_404(owned(Refund, user).select_related("draft", "payout_draft"), pk=refund_id)


def refund_list(*, user, filters: dict[str, Any]) -> QuerySet[Refund]:
    """The account's refunds in the caller's mode, newest first, by status and paid draft when given."""
    queryset = owned(Refund, user).select_related("draft", "payout_draft")
    if filters.get("status"):
        queryset = queryset.filter(status=filters["status"])
    if filters.get("draftId"):
        queryset = queryset.filter(draft_id=filters["draftId"])
    return queryset.order_by("-created_at", "-id")


def refund_by_token(*, token: str) -> Refund:
    """The refund a claim link names; 404 for any other token."""
    return get_object_or_404(Refund.objects.select_related("draft", "payout_draft", "user"), token=token)

"""Reads for recurring templates."""

from __future__ import annotations

from uuid import UUID

from django.db.models import QuerySet

from accounts.modes import owned
from core.problems import NotFound
from recurring.models import RecurringTemplate


def recurring_template_list(*, user) -> QuerySet:
    return owned(RecurringTemplate, user).order_by("-created_at", "-id")


def recurring_template_get(*, user, template_id: UUID | str) -> RecurringTemplate:
    """The account's template; another account's is as unknown as a missing one (404)."""
    try:
        return owned(RecurringTemplate, user).get(pk=template_id)
    except (RecurringTemplate.DoesNotExist, ValueError):
        raise NotFound("No such recurring template.") from None

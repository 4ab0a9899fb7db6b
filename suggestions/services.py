"""Writes for suggestions."""

from __future__ import annotations

from suggestions.models import Suggestion


def suggestion_create(*, text: str, email: str | None = None, user=None) -> Suggestion:
    """Store a suggestion. A signed-in sender is remembered; anonymous ones stay anonymous."""
    signed_in = user if user is not None and user.is_authenticated else None
    return Suggestion.objects.create(text=text, email=email or None, user=signed_in)


def suggestions_mark_handled(*, suggestion_ids: list, handled: bool = True) -> int:
    return Suggestion.objects.filter(pk__in=suggestion_ids).update(handled=handled)

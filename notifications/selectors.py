"""Reads for notifications."""

from __future__ import annotations

from notifications.models import NotificationPreference


def notification_email_enabled(*, user) -> bool:
    preference = NotificationPreference.objects.filter(user=user).first()
    return preference.email_enabled if preference else True

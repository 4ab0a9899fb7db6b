"""Reads for notifications."""

from __future__ import annotations

from notifications.models import NotificationPreference


def notification_email_enabled(*, user) -> bool:
    preference = NotificationPreference.objects.filter(user=user).first()
    return preference.email_enabled if preference else True


def notification_preference_get(*, user) -> NotificationPreference:
    """The account's preference; an unsaved one with the defaults when it has none."""
    return NotificationPreference.objects.filter(user=user).first() or NotificationPreference(user=user)


def attention_digest_enabled(*, user) -> bool:
    """Whether the account gets the daily digest: its own switch, and email notifications on."""
    preference = NotificationPreference.objects.filter(user=user).first()
    return preference is None or (preference.email_enabled and preference.attention_digest)


def email_backlog(*, now) -> tuple[int, object]:
    """Emails not yet sent nor given up, and the due time of the oldest one due now (None when
    none is due): read by /healthz."""
    from django.db.models import Min

    from notifications.models import EmailNotification, EmailStatus

    waiting = EmailNotification.objects.filter(status__in=[EmailStatus.PENDING, EmailStatus.SENDING])
    oldest = waiting.filter(status=EmailStatus.PENDING, next_attempt_at__lte=now).aggregate(at=Min("next_attempt_at"))
    return waiting.count(), oldest["at"]

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class NotificationPreference(models.Model):
    """Email notifications about an account's drafts. No row means the defaults (on)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="notification_preference"
    )
    email_enabled = models.BooleanField(default=True)
    # The daily email of what waits for the account (attention.digest); off: none.
    attention_digest = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user} email={'on' if self.email_enabled else 'off'}"


class EmailStatus(models.TextChoices):
    PENDING = "Pending"
    SENDING = "Sending"
    SENT = "Sent"
    FAILED = "Failed"


class EmailNotification(models.Model):
    """The email outbox: a row written in the transaction of what it reports, sent after
    commit by a task, and retried by the beat tick until it is sent or given up."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Empty for an address that has no account yet (a registration code).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="email_notifications",
    )
    to = models.EmailField()
    kind = models.CharField(max_length=64)  # a name from notifications.kinds.KINDS
    context = models.JSONField(default=dict, blank=True)
    # A row with the same key is written once (e.g. one email per event).
    dedup_key = models.CharField(max_length=200, null=True, blank=True)
    status = models.CharField(max_length=16, choices=EmailStatus.choices, default=EmailStatus.PENDING)
    attempt_count = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["dedup_key"], name="notifications_email_once_per_key")]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="notifications_email_due",
                condition=models.Q(status="Pending"),
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} to {self.to} ({self.status})"

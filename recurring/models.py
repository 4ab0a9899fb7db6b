from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from addressbook.models import AddressBookEntry


class RecurrenceInterval(models.TextChoices):
    DAILY = "Daily", gettext_lazy("Daily")
    WEEKLY = "Weekly", gettext_lazy("Weekly")
    MONTHLY = "Monthly", gettext_lazy("Monthly")


class RecurringTemplate(models.Model):
    """A draft made again every day, week or month, from `first_run_at` in the template's time zone.

    The schedule lives here, in the database: `next_run_index` counts the runs made (or refused)
    so far and `next_run_at` is the time of the next one. A beat tick claims due rows with
    SELECT ... FOR UPDATE SKIP LOCKED and a short lease (`claimed_until`); the draft of run n is
    written in the same transaction that moves the template to run n + 1, so each run makes at
    most one draft, whatever the ticks, workers and downtimes do.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="recurring_templates")
    name = models.CharField(max_length=200, blank=True)
    interval = models.CharField(max_length=8, choices=RecurrenceInterval.choices)
    time_zone = models.CharField(max_length=64, default="UTC")
    first_run_at = models.DateTimeField()
    # The CreateDraftRequest of every run, as the API received it (JSON-safe).
    draft = models.JSONField()
    # Set when the draft names an address-book entry: each run pays the entry's current address.
    address_book_entry = models.ForeignKey(
        AddressBookEntry, null=True, blank=True, on_delete=models.PROTECT, related_name="recurring_templates"
    )

    next_run_index = models.IntegerField(default=0)
    next_run_at = models.DateTimeField()
    claimed_until = models.DateTimeField(null=True, blank=True)
    paused = models.BooleanField(default=False)

    last_run_at = models.DateTimeField(null=True, blank=True)
    last_draft_id = models.UUIDField(null=True, blank=True)
    # The last run that made no draft: {code, status, detail, runAt, at}. Cleared by a good run.
    last_refusal = models.JSONField(null=True, blank=True)
    refused_runs = models.IntegerField(default=0)
    skipped_runs = models.IntegerField(default=0)
    livemode = models.BooleanField(default=True)  # accounts.modes: its drafts are made in this mode
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["user", "-created_at"]),
            models.Index(fields=["next_run_at"], condition=Q(paused=False), name="recurring_due"),
        ]

    def __str__(self) -> str:
        return f"{self.name or self.id} ({self.interval})"

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

MAX_TEXT_LENGTH = 4000


class Suggestion(models.Model):
    """Feedback sent to the operator, by anyone; read and marked handled in the admin."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    text = models.TextField(max_length=MAX_TEXT_LENGTH)
    email = models.EmailField(max_length=320, null=True, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    handled = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.text[:60]

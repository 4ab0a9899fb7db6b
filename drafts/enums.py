"""The statuses of a draft (the transitions between them: drafts.services)."""

from django.db import models


class DraftStatus(models.TextChoices):
    PENDING = "Pending"
    SEEN = "Seen"
    AMOUNT_MISMATCH = "AmountMismatch"
    CONFIRMED = "Confirmed"
    EXPIRED = "Expired"
    CANCELLED = "Cancelled"

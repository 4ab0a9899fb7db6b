"""The statuses of a draft (the transitions between them: drafts.services)."""

from django.db import models
from django.utils.translation import pgettext_lazy


class DraftStatus(models.TextChoices):
    PENDING = "Pending", pgettext_lazy("status", "Pending")
    SEEN = "Seen", pgettext_lazy("status", "Seen")
    AMOUNT_MISMATCH = "AmountMismatch", pgettext_lazy("status", "Amount Mismatch")
    CONFIRMED = "Confirmed", pgettext_lazy("status", "Confirmed")
    EXPIRED = "Expired", pgettext_lazy("status", "Expired")
    CANCELLED = "Cancelled", pgettext_lazy("status", "Cancelled")

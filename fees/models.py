from __future__ import annotations

from django.conf import settings
from django.db import models


class DustWaiver(models.Model):
    """A MultiOutput fee below the dust limit that was waived (counted per account and UTC day).

    ``draft_id`` is a plain UUID, not a foreign key: the drafts app owns drafts.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="dust_waivers")
    draft_id = models.UUIDField()
    day = models.DateField(help_text="UTC day the waiver counts against")
    fee_base_units = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["draft_id"], name="fees_dust_waiver_one_per_draft")]
        indexes = [models.Index(fields=["user", "day"], name="fees_dust_waiver_user_day")]

    def __str__(self) -> str:
        return f"dust waiver {self.fee_base_units} for draft {self.draft_id}"


# (The accrued-fee ledger of another issue goes here.)

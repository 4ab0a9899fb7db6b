from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import pgettext_lazy

from payments.money import MoneyField


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


class AccruedFee(models.Model):
    """A fee owed by an account: from a confirmed SingleOutput, Lightning or pay-link draft, or a
    MultiOutput payment that arrived without its fee output. Settled by one settlement draft."""

    class Status(models.TextChoices):
        OUTSTANDING = "Outstanding", pgettext_lazy("status", "Outstanding")
        SETTLED = "Settled", pgettext_lazy("status", "Settled")
        WAIVED = "Waived", pgettext_lazy("status", "Waived")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="accrued_fees")
    draft = models.OneToOneField("drafts.Draft", on_delete=models.PROTECT, related_name="accrued_fee")
    fee_usd = MoneyField()
    fee_base_units = models.BigIntegerField(help_text="In base units of the draft's asset, at its locked rate")
    currency = models.CharField(max_length=8)
    network = models.CharField(max_length=16)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.OUTSTANDING)
    accrued_at = models.DateTimeField()
    settlement_draft = models.ForeignKey(
        "drafts.Draft", on_delete=models.SET_NULL, null=True, blank=True, related_name="covered_fees"
    )
    settled_at = models.DateTimeField(null=True, blank=True)
    waived_reason = models.CharField(max_length=500, blank=True)
    waived_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["accrued_at"]
        indexes = [models.Index(fields=["user", "status", "accrued_at"], name="fees_accrued_user_status")]

    def __str__(self) -> str:
        return f"{self.fee_usd} USD owed for draft {self.draft_id} ({self.status})"

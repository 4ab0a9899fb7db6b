"""Refunds: money a merchant gives back for a Confirmed draft, paid from their own wallet.

The customer names the address on a claim link; once the merchant approves it, the payment
back is an ordinary draft (origin Refund) to that address, which the watchers confirm like
any other. The service holds no keys and no funds at any step.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import pgettext_lazy

from payments.money import MoneyField


class RefundStatus(models.TextChoices):
    CLAIMABLE = "Claimable", pgettext_lazy("status", "Claimable")  # issued; waiting for the customer's address
    CLAIMED = "Claimed", pgettext_lazy("status", "Claimed")  # the customer gave an address; waiting for the merchant
    APPROVED = (
        "Approved",
        pgettext_lazy("status", "Approved"),
    )  # the merchant approved: the payout draft waits for their payment
    PAID = "Paid", pgettext_lazy("status", "Paid")  # the payout draft confirmed on chain
    CANCELLED = "Cancelled", pgettext_lazy("status", "Cancelled")
    EXPIRED = "Expired", pgettext_lazy("status", "Expired")  # nobody claimed it in time


OPEN_REFUND_STATUSES = (RefundStatus.CLAIMABLE, RefundStatus.CLAIMED, RefundStatus.APPROVED)


class Refund(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="refunds")
    # The Confirmed draft whose payment this gives back (part of).
    draft = models.ForeignKey("drafts.Draft", on_delete=models.PROTECT, related_name="refunds")
    # The claim link's bearer secret (256 random bits, URL-safe), as a pay link's.
    token = models.CharField(max_length=64, unique=True)
    status = models.CharField(max_length=16, choices=RefundStatus.choices, default=RefundStatus.CLAIMABLE)
    # accounts.modes: the paid draft's mode. Its payout draft and its events are made in it, and
    # only a caller in the same mode sees it.
    livemode = models.BooleanField(default=True)

    # What is given back: an asset on a network, for an exact amount or a fiat price (the
    # amount in the asset is then fixed when the merchant approves, at the rate of that moment).
    currency = models.CharField(max_length=10)
    network = models.CharField(max_length=20)
    amount_base_units = models.BigIntegerField(null=True, blank=True)
    fiat_currency = models.CharField(max_length=3, null=True, blank=True)
    fiat_amount = MoneyField(null=True, blank=True)
    # The refund's value in base units of the paid draft's asset, at issue: what it takes off
    # what is left to refund of that payment.
    share_base_units = models.BigIntegerField()
    # The quote that valued it (a fiat price or another asset), for the record.
    quote = models.JSONField(null=True, blank=True)

    reason = models.CharField(max_length=500, null=True, blank=True)
    customer_email = models.EmailField(null=True, blank=True)
    # The customer's language (a LANGUAGES code): the pay page's they paid on, else the
    # merchant's. The claim email is written in it.
    customer_language = models.CharField(max_length=16, blank=True, default="")
    refund_address = models.CharField(max_length=128, null=True, blank=True)
    # The outgoing payment the merchant makes: a draft to the customer's address.
    payout_draft = models.OneToOneField(
        "drafts.Draft", on_delete=models.SET_NULL, null=True, blank=True, related_name="refund_paid_by"
    )

    expires_at = models.DateTimeField()
    claimed_at = models.DateTimeField(null=True, blank=True)
    approved_at = models.DateTimeField(null=True, blank=True)
    paid_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["user", "-created_at"]),
            models.Index(fields=["expires_at"], condition=Q(status="Claimable"), name="refund_claimable_expiry"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(share_base_units__gt=0), name="refund_share_positive"),
            models.CheckConstraint(
                condition=Q(amount_base_units__isnull=False, fiat_amount__isnull=True)
                | Q(amount_base_units__isnull=True, fiat_amount__isnull=False, fiat_currency__isnull=False),
                name="refund_exact_or_fiat_priced",
            ),
        ]

    def __str__(self) -> str:
        return f"refund {self.id} ({self.status})"

    @property
    def fiat_priced(self) -> bool:
        return self.fiat_amount is not None

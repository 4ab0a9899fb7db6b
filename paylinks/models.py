"""Payment requests (pay links): a fiat amount the payer settles in one of the offered
assets, through a draft created when the payer picks one."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from payments.money import MoneyField

# A pay link's or a refund claim's token in a URL (the pages', the checkout's, the claim's).
TOKEN_PATTERN = r"[A-Za-z0-9_-]{20,64}"


class PaymentRequestStatus(models.TextChoices):
    OPEN = "Open"
    PAID = "Paid"
    EXPIRED = "Expired"
    CANCELLED = "Cancelled"


class PaymentRequest(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="payment_requests")
    # The pay link's bearer secret (256 random bits, URL-safe). Kept in clear: the owner
    # reads the pay URL back from the API, as with any share link.
    token = models.CharField(max_length=64, unique=True)

    fiat_currency = models.CharField(max_length=3)
    fiat_amount = MoneyField()
    # [{"currency", "network", "receiverAddress", "method"}], validated at creation.
    options = models.JSONField()
    order_id = models.CharField(max_length=200, null=True, blank=True)
    memo = models.CharField(max_length=500, null=True, blank=True)
    # Where "Back to <merchant>" leads once paid or cancelled (https only, checked at creation).
    return_url = models.URLField(max_length=2000, null=True, blank=True)

    status = models.CharField(max_length=16, choices=PaymentRequestStatus.choices, default=PaymentRequestStatus.OPEN)
    expires_at = models.DateTimeField()
    # The draft of the payer's current choice (the one that paid, once Paid).
    draft = models.ForeignKey("drafts.Draft", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    payer_email = models.EmailField(null=True, blank=True)
    # The language the payer read the pay page in when choosing how to pay or asking for the
    # receipt (a LANGUAGES code): the receipt and a refund's claim email are written in it.
    payer_language = models.CharField(max_length=16, blank=True, default="")
    paid_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    livemode = models.BooleanField(default=True)  # accounts.modes
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["user", "-created_at"]),
            models.Index(fields=["user", "order_id"]),
            models.Index(fields=["expires_at"], condition=Q(status="Open"), name="payment_request_open_expiry"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(fiat_amount__gt=0), name="payment_request_amount_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.fiat_amount} {self.fiat_currency} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status == PaymentRequestStatus.OPEN


class PayLinkPreference(models.Model):
    """How loudly an account's pay links speak through draft events. By default every checkout
    draft sends draft.created and a draft the payer switched away from sends draft.cancelled
    (the interface's contract); `quiet_checkout_drafts` opts out of both: the pay link's own
    events and the chosen draft's payment events still say what happened."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="pay_link_preference"
    )
    quiet_checkout_drafts = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"pay-link preference of {self.user_id}"

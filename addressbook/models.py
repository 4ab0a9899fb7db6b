from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from payments.enums import Network


class AddressDirection(models.TextChoices):
    SENDING = "Sending", gettext_lazy("Sending")
    RECEIVING = "Receiving", gettext_lazy("Receiving")


class AddressBookEntry(models.Model):
    """A named address of the account: one it receives at, or one it (or its payers) send from."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="address_book")
    label = models.CharField(max_length=200, blank=True)
    network = models.CharField(max_length=16, choices=Network.choices)
    # Normalised by the registry (bech32 lower-cased, EVM in EIP-55 form), so the same address
    # written two ways is still one entry.
    address = models.CharField(max_length=128)
    direction = models.CharField(max_length=16, choices=AddressDirection.choices)
    verified = models.BooleanField(default=False)
    # The account's default receiving address on this network: pay links and drafts that name
    # no address are paid here (one per account and network, Receiving entries only).
    is_default = models.BooleanField(default=False)
    # A Receiving entry may stand for the account's receiving wallet rather than one address: as the
    # network's default, drafts and pay-link options that name no receiver get the wallet's next
    # address each (drafts.wallets). `address` is then the wallet's address at index 0 (one entry per wallet).
    receiving_wallet = models.ForeignKey(
        "wallets.ReceivingWallet",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="address_book_entries",
    )
    # Added while the receiving-address lock was on: API keys and MCP may pay it only from
    # this time on (RECEIVER_LOCK_DELAY_HOURS later; the owner may cut it short). None: at once.
    usable_from = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "address book entries"
        constraints = [
            models.UniqueConstraint(fields=["user", "network", "address"], name="address_book_unique_per_account"),
            models.UniqueConstraint(
                fields=["user", "network"], condition=Q(is_default=True), name="address_book_one_default_per_network"
            ),
            models.CheckConstraint(
                condition=Q(is_default=False) | Q(direction="Receiving"), name="address_book_default_is_receiving"
            ),
            models.CheckConstraint(
                condition=Q(receiving_wallet__isnull=True) | Q(direction="Receiving"),
                name="address_book_wallet_is_receiving",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.label or self.address} ({self.network})"

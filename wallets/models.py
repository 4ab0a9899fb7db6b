from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from payments.enums import Network


class ReceivingWallet(models.Model):
    """A merchant's Bitcoin wallet, known by its public output descriptor (never a private key):
    each draft that names it is paid at the next address of its receive branch, never reused
    (drafts.wallets). Archived, it gives no more addresses; its drafts keep theirs."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="receiving_wallets")
    livemode = models.BooleanField(default=True)
    label = models.CharField(max_length=200, blank=True)
    network = models.CharField(max_length=16, choices=Network.choices)
    # The receive branch (…/0/*) with its BIP380 checksum, as addressbook.descriptors wrote it.
    descriptor = models.TextField()
    script_type = models.CharField(max_length=8)
    fingerprint = models.CharField(max_length=8, blank=True)
    derivation_path = models.CharField(max_length=100, blank=True)
    # Its address at index 0: one wallet per address chain and network, whoever registers it
    # (two registrations would hand out the same addresses to two drafts).
    first_address = models.CharField(max_length=128)
    # The index the next draft gets; only ever grows (under the row's lock).
    next_index = models.PositiveIntegerField(default=0)
    archived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["network", "first_address"], name="receiving_wallet_one_per_chain"),
        ]

    def __str__(self) -> str:
        return f"{self.label or self.fingerprint or self.first_address} ({self.network})"

import uuid

from django.db import models


class Key(models.Model):
    """A Bearer key; only its SHA-256 hash is stored."""

    key_hash = models.CharField(max_length=64, unique=True)

    def __str__(self) -> str:
        return f"key {self.pk}"


class Draft(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    key = models.ForeignKey(Key, on_delete=models.CASCADE)
    network = models.CharField(max_length=16)
    currency = models.CharField(max_length=8)
    receiver_address = models.CharField(max_length=128)
    fiat_currency = models.CharField(max_length=3)
    fiat_amount = models.DecimalField(max_digits=20, decimal_places=8)
    amount_base_units = models.BigIntegerField()
    memo = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=16, default="Pending")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return str(self.id)

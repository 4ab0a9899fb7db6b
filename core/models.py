from django.db import models


class Lease(models.Model):
    """A named lease with an expiry (core/leases.py): who runs a piece of periodic work now."""

    name = models.CharField(max_length=200, primary_key=True)
    holder = models.CharField(max_length=64)
    # Milliseconds since the epoch: compared as a plain integer on PostgreSQL and SQLite alike.
    expires_ms = models.BigIntegerField()

    class Meta:
        db_table = "config_lease"  # the name it was created with

    def __str__(self) -> str:
        return f"{self.name} held by {self.holder}"

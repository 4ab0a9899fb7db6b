"""The audit log: who did what in an organization, when, from where. Append-only: an entry is
written once (`audit.services.record`) and never changed; the only removal is the retention
purge of entries older than AUDIT_RETENTION_DAYS (`audit.tasks.audit_purge`)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class AppendOnly(Exception):
    """An audit entry is never updated nor deleted."""


class AuditQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnly("Audit entries are never updated.")

    def delete(self):
        raise AppendOnly("Audit entries are deleted only by the retention purge.")

    def bulk_update(self, objs, fields, batch_size=None):
        raise AppendOnly("Audit entries are never updated.")

    def purge(self) -> int:
        """The retention purge's own removal (audit.tasks.audit_purge): the one deleting path."""
        deleted, _ = models.QuerySet.delete(self)
        return deleted


class AuditEntry(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No database constraint and no cascade: an entry outlives what it names.
    organization = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    actor_person = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, db_constraint=False, null=True, related_name="+"
    )
    actor_key = models.ForeignKey(
        "accounts.ApiKey", on_delete=models.DO_NOTHING, db_constraint=False, null=True, related_name="+"
    )
    action = models.CharField(max_length=64)
    ip = models.GenericIPAddressField(null=True, blank=True)
    changes = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["organization", "-created_at"], name="audit_org_time")]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action}"

    def save(self, *args, **kwargs) -> None:
        if not kwargs.get("force_insert"):  # objects.create inserts; nothing else writes
            raise AppendOnly("Audit entries are never updated.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("Audit entries are deleted only by the retention purge.")

"""Reading the audit log of an organization, newest first, with filters."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from audit.models import AuditEntry
from core.wire import json_datetime


def audit_entries(
    *, organization, action: str | None = None, since: datetime | None = None, until: datetime | None = None
) -> QuerySet[AuditEntry]:
    entries = AuditEntry.objects.filter(organization=organization).select_related("actor_person", "actor_key")
    if action:
        entries = entries.filter(action__startswith=action) if action.endswith(".") else entries.filter(action=action)
    if since is not None:
        entries = entries.filter(created_at__gte=since)
    if until is not None:
        entries = entries.filter(created_at__lt=until)
    return entries


def audit_entry_json(entry: AuditEntry) -> dict:
    person, key = entry.actor_person, entry.actor_key
    return {
        "id": str(entry.id),
        "action": entry.action,
        "at": json_datetime(entry.created_at),
        "actor": (
            {"type": "apiKey", "id": str(key.id), "name": key.name, "prefix": key.prefix}
            if key is not None
            else {"type": "person", "id": str(person.public_id), "email": person.email}
            if person is not None
            else {"type": "system"}
        ),
        "ip": entry.ip,
        "changes": entry.changes,
    }

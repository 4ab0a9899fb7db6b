"""Writing the audit log: `record`, called by the services that change what the log covers
(docs/security.md, Audit log)."""

from __future__ import annotations

import ipaddress
from typing import Any

from audit.context import actor
from audit.models import AuditEntry


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | str):
        return value
    return str(value)  # Decimal, UUID, datetime: as text, never a float


def _address(ip: str | None) -> str | None:
    try:
        return str(ipaddress.ip_address(ip)) if ip else None
    except ValueError:
        return None


def record(
    *,
    organization,
    action: str,
    changes: dict[str, Any] | None = None,
    person=None,
    key=None,
    ip: str | None = None,
) -> AuditEntry:
    """Append an entry: the actor and address are the current request's (audit.context) unless
    named (a sign-in names its person)."""
    current = actor()
    if person is None and key is None:
        person, key = current.person, current.key
    return AuditEntry.objects.create(
        organization_id=getattr(organization, "pk", organization),
        actor_person_id=getattr(person, "pk", person),
        actor_key_id=getattr(key, "pk", key),
        action=action,
        ip=_address(ip or current.ip),
        changes=_plain(changes or {}),
    )

"""The receiving-address lock, an account setting (docs/accounts.md, "Receiving-address lock").

While it is on, drafts, pay links and recurring templates that API keys or MCP create may pay
only addresses of the account's address book that are past their waiting time
(``addressbook.selectors.receiver_lock_check``, called by each creation door). The flag is on
the account's row, which the API key look-up loads with the key: with the lock off the check
costs nothing.

Turning it on needs a person's session (an API key gets 403 session_required). Turning it off
needs step-up (accounts.stepup), emails the owner with the link that locks the account, and
takes effect RECEIVER_LOCK_DELAY_HOURS later (pending-off until then; turning it on again
cancels that).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from accounts.modes import by_key
from accounts.permissions import SessionRequired
from accounts.security_links import change_notice
from accounts.sessions import Client
from accounts.stepup import step_up_require
from audit import services as audit
from core.wire import json_datetime


@dataclass(frozen=True)
class ReceiverLock:
    enabled: bool  # on now (a pending turn-off still counts as on until off_at)
    off_at: datetime | None  # when a pending turn-off takes effect
    delay_hours: int


def receiver_lock_get(*, user: User, now: datetime | None = None) -> ReceiverLock:
    now = now or timezone.now()
    off_at = user.receiver_lock_off_at
    enabled = user.receiver_lock and (off_at is None or off_at > now)
    return ReceiverLock(
        enabled=enabled, off_at=off_at if enabled else None, delay_hours=settings.RECEIVER_LOCK_DELAY_HOURS
    )


def receiver_lock_set(request, *, user: User, enabled: bool, client: Client) -> ReceiverLock:
    """On: at once (a session; keys never). Off: step-up, then pending for the delay."""
    if by_key(user) or getattr(request, "session", None) is None:
        raise SessionRequired("The receiving-address lock is changed from a signed-in session; API keys cannot.")
    now = timezone.now()
    current = receiver_lock_get(user=user, now=now)
    if enabled:
        fields: dict[str, Any] = {"receiver_lock": True, "receiver_lock_off_at": None}
    elif not current.enabled or current.off_at is not None:
        return current  # off already, or already on its way off
    else:
        step_up_require(request)
        delay = timedelta(hours=settings.RECEIVER_LOCK_DELAY_HOURS)
        fields = {"receiver_lock": bool(delay), "receiver_lock_off_at": now + delay if delay else None}
    with transaction.atomic():
        User.objects.filter(pk=user.pk).update(**fields)
        for name, value in fields.items():
            setattr(user, name, value)
        audit.record(
            organization=user,
            action="address_lock.on" if enabled else "address_lock.turning_off",
            ip=client.ip,
            changes={"offAt": fields["receiver_lock_off_at"]},
        )
        if not enabled:
            off_at = fields["receiver_lock_off_at"] or now
            change_notice(user=user, notice="receiver_lock_off", client=client, off_at=json_datetime(off_at))
    return receiver_lock_get(user=user, now=now)

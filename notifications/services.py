"""Writes for email notifications: the email outbox and the preference.

`email_enqueue` is the one door for every email the service sends. It writes an outbox
row in the caller's transaction; after commit a task sends it; if that enqueue (or the
worker, or the broker) is lost, the `notifications-send-due-emails` beat tick finds the
due row in the database. Delivery is at least once.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from notifications import emails
from notifications.kinds import kind_get
from notifications.models import EmailNotification, EmailStatus, NotificationPreference
from notifications.selectors import notification_email_enabled

logger = logging.getLogger(__name__)


def email_enqueue(
    *,
    kind: str,
    context: dict[str, Any],
    user=None,
    to: str | None = None,
    dedup_key: str | None = None,
    livemode: bool = True,
) -> EmailNotification | None:
    """Write an email to the outbox (in the caller's transaction, if any) and send it after
    commit. Give `user` (the email goes to the account's address) or `to` (an address with
    no account yet), or both. Returns None when nothing is written: the kind is optional and
    the account turned emails off, or a row with the same `dedup_key` exists.

    An email to an organization (`user` without `to`) whose kind names an `audience` goes to
    every member whose role grants that work, each rendered in their own language (the row for
    the organization's own person keeps `dedup_key`; the others add their id to it).

    `livemode=False`: the email is about a test-mode object (docs/test-mode.md). It is marked
    as a test when sent ("[TEST]" before its subject, an `X-Test-Mode: true` header) and, unless
    the operator set TEST_MODE_CUSTOMER_EMAILS, goes to the account's own address in place of
    `to` (so `user` is required): a test never writes to an address someone typed in."""
    email_kind = kind_get(kind)
    if user is None and not to:
        raise ValueError("email_enqueue needs a user or a to address")
    # An email addressed to an organization (no `to`) of a kind some role cares about goes to
    # each member with that role, in their own language (the owner's row keeps `dedup_key`).
    audience = email_kind.audience
    members = emails.email_recipients(user, audience) if audience and user is not None and not to else None
    if members:
        if email_kind.optional and not notification_email_enabled(user=user):
            return None
        if dedup_key is not None and EmailNotification.objects.filter(dedup_key=dedup_key).exists():
            return None
        if not livemode:
            context = {**context, emails.TEST_MODE_KEY: True}
        rows = [
            EmailNotification(
                user=user,
                to=address,
                kind=kind,
                context={**context, "language": language or settings.LANGUAGE_CODE},
                dedup_key=dedup_key if dedup_key is None or person_id == user.pk else f"{dedup_key}:{person_id}",
            )
            for person_id, address, language in members
        ]
        EmailNotification.objects.bulk_create(rows, ignore_conflicts=dedup_key is not None)
        for row in rows:
            _send_after_commit(row.id)
        return rows[0]
    if not livemode:
        if user is None:
            raise ValueError("a test-mode email names its account (user)")
        if not settings.TEST_MODE_CUSTOMER_EMAILS:
            to = user.email
        context = {**context, emails.TEST_MODE_KEY: True}
    if email_kind.optional and user is not None and not notification_email_enabled(user=user):
        return None
    if dedup_key is not None and EmailNotification.objects.filter(dedup_key=dedup_key).exists():
        return None
    notification = EmailNotification(user=user, to=to or user.email, kind=kind, context=context, dedup_key=dedup_key)
    # ignore_conflicts: a concurrent writer of the same dedup_key wins without breaking the
    # caller's transaction; the task then finds no row under this id and does nothing.
    EmailNotification.objects.bulk_create([notification], ignore_conflicts=dedup_key is not None)
    _send_after_commit(notification.id)
    return notification


def _send_after_commit(notification_id: UUID) -> None:
    from notifications import tasks

    def send() -> None:
        try:
            tasks.send_email.delay(str(notification_id))
        except Exception:  # the broker is down; the row waits for the next tick
            logger.warning("Could not enqueue an email; the beat tick will pick it up", exc_info=True)

    transaction.on_commit(send)


def notification_preference_update(
    *, user, email_enabled: bool | None = None, attention_digest: bool | None = None
) -> NotificationPreference:
    changes = {
        name: value
        for name, value in (("email_enabled", email_enabled), ("attention_digest", attention_digest))
        if value is not None
    }
    preference, _ = NotificationPreference.objects.update_or_create(user=user, defaults=changes)
    return preference


def emails_send_due(*, now: datetime | None = None, limit: int = 50, notification_id: UUID | None = None) -> int:
    """Send due emails (claimed with SKIP LOCKED, sent after the claim commits). A row whose
    sender died goes out again after a lease: at least once, rarely twice. Returns how many
    were sent."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.EMAIL_TIMEOUT * 4 + 60)
    with transaction.atomic():
        due = EmailNotification.objects.filter(
            Q(status=EmailStatus.PENDING, next_attempt_at__lte=now)
            | Q(status=EmailStatus.SENDING, claimed_at__lt=stale)
        )
        if notification_id is not None:
            due = due.filter(id=notification_id)
        rows = list(due.order_by("next_attempt_at").select_for_update(skip_locked=True)[:limit])
        for row in rows:
            row.status, row.claimed_at, row.attempt_count = EmailStatus.SENDING, now, row.attempt_count + 1
            row.save(update_fields=["status", "claimed_at", "attempt_count"])
    sent = 0
    for row in rows:
        wipe: dict[str, Any] = {"context": {}} if _kind_secret(row.kind) else {}
        try:
            emails.email_deliver(row)
        except Exception as exc:
            logger.warning("Email %s (%s) failed: %s", row.id, row.kind, exc.__class__.__name__)
            failed = row.attempt_count >= settings.NOTIFICATIONS_EMAIL_MAX_ATTEMPTS
            EmailNotification.objects.filter(pk=row.pk).update(
                status=EmailStatus.FAILED if failed else EmailStatus.PENDING,
                next_attempt_at=timezone.now() + timedelta(minutes=2**row.attempt_count),
                last_error=f"{exc.__class__.__name__}: {exc}"[:500],
                **(wipe if failed else {}),
            )
        else:
            EmailNotification.objects.filter(pk=row.pk).update(status=EmailStatus.SENT, sent_at=timezone.now(), **wipe)
            sent += 1
    return sent


def _kind_secret(name: str) -> bool:
    try:
        return kind_get(name).secret
    except ValueError:
        return False

"""Deleting an account.

The row stays, anonymised, because confirmed drafts and accrued fees belong to the
operator's books (drafts point at it). What happens, in one transaction:

- every app that holds the account's data closes its part through a registered closer
  (drafts: open drafts cancelled, personal fields of every draft cleared; webhooks:
  endpoints, events and deliveries deleted; apps added later register theirs);
- API keys are revoked; passkeys, the authenticator app, recovery codes, emailed codes,
  known devices and queued emails are deleted;
- the address becomes `deleted-<id>@deleted.invalid`, the password unusable, the account
  inactive, so every session and key stops working at once.

The owner is emailed a last notice at the old address. It needs a session that signed in
within AUTH_REAUTH_MINUTES."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from accounts import sessions
from accounts.models import (
    ApiKey,
    EmailCode,
    KnownDevice,
    MerchantProfile,
    Passkey,
    RecoveryCode,
    TotpDevice,
    User,
)
from accounts.sessions import Client
from notifications import kinds
from notifications.models import EmailNotification, NotificationPreference
from notifications.services import email_enqueue

logger = logging.getLogger("accounts.security")

AccountCloser = Callable[..., None]  # (*, user: User, now: datetime) -> None
_closers: list[AccountCloser] = []


def account_closer(func: AccountCloser) -> AccountCloser:
    """Register what an app does with an account's data when the account is deleted. Apps
    above accounts register from their AppConfig.ready, so accounts imports none of them."""
    if func not in _closers:
        _closers.append(func)
    return func


def account_delete(request, *, user: User, client: Client, now: datetime | None = None) -> None:
    if not sessions.authenticated_recently(request):
        raise sessions.ReauthenticationRequired()
    now = now or timezone.now()
    with transaction.atomic():
        user = User.objects.select_for_update().get(pk=user.pk)
        old_email = user.email
        for closer in _closers:
            closer(user=user, now=now)
        ApiKey.objects.filter(user=user, revoked_at__isnull=True).update(revoked_at=now)
        # The merchant profile goes too: its name, logo and support contact are what payers saw.
        for model in (Passkey, RecoveryCode, EmailCode, KnownDevice, TotpDevice, EmailNotification, MerchantProfile):
            model.objects.filter(user=user).delete()
        NotificationPreference.objects.filter(user=user).delete()
        user.email = f"deleted-{user.public_id}@deleted.invalid"
        user.set_unusable_password()
        user.is_active = user.is_staff = user.is_superuser = False
        user.deleted_at = now
        user.save()
        email_enqueue(to=old_email, kind=kinds.SECURITY_NOTICE, context=sessions.notice_context("account_deleted"))
    logger.info("Account deleted by its owner: account=%s ip=%s", user.public_id, client.ip)
    sessions.session_sign_out(request)

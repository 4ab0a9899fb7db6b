"""The undo and lock links of security emails.

A change that could hand the account to someone else (a passkey added, the authenticator app
or the last passkey removed, an API key created, an address added to a locked address book,
the receiving-address lock turned off) emails the owner what changed, when, from which address
and browser (``change_notice``), with two links:

- "Lock the account": on confirmation, every session ends (the password hash changes), every
  API key is revoked, and no sign-in works (password or passkey) until a password reset.
- "Undo" where one thing can be undone: the new passkey deleted, the new API key revoked.

A link is signed (``django.core.signing``, salt ``accounts.security-link``) and names the
account, the action, its object and when it was issued; it works for SECURITY_LINK_DAYS and
once: a lock link issued before the account's last lock is spent, an undo whose object is
already gone or revoked has nothing left to do.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy

from accounts.models import ApiKey, Passkey, User
from accounts.sessions import Client, notice_context
from core.problems import Conflict, Problem
from notifications import kinds
from notifications.services import email_enqueue

logger = logging.getLogger("accounts.security")

SALT = "accounts.security-link"
LOCK = "lock"
UNDO_PASSKEY = "passkey"
UNDO_API_KEY = "api_key"
ACTIONS = (LOCK, UNDO_PASSKEY, UNDO_API_KEY)


class LinkInvalid(Problem):
    default_code = "invalid_link"
    default_detail = gettext_lazy("This link is not valid or has expired.")


class LinkUsed(Conflict):
    default_code = "link_used"
    default_detail = "This link was used already: there is nothing left for it to do."


@dataclass(frozen=True)
class SecurityLink:
    user: User
    action: str
    target: str
    issued_at: datetime


def link_token(*, user: User, action: str, target: str = "") -> str:
    return signing.dumps({"u": str(user.public_id), "a": action, "t": target, "at": time.time()}, salt=SALT)


def link_url(token: str) -> str:
    return settings.BASE_URL.rstrip("/") + reverse("security_link", kwargs={"token": token})


def link_read(token: str) -> SecurityLink:
    """The link a token names; LinkInvalid when forged, expired or of an account that is gone."""
    try:
        data = signing.loads(token, salt=SALT, max_age=settings.SECURITY_LINK_DAYS * 86400)
    except signing.BadSignature:
        raise LinkInvalid() from None
    if not isinstance(data, dict) or data.get("a") not in ACTIONS:
        raise LinkInvalid()
    user = User.objects.filter(public_id=str(data.get("u")), is_active=True, deleted_at__isnull=True).first()
    if user is None:
        raise LinkInvalid()
    issued = datetime.fromtimestamp(float(data.get("at", 0)), tz=UTC)
    return SecurityLink(user=user, action=data["a"], target=str(data.get("t") or ""), issued_at=issued)


def change_notice(
    *, user: User, notice: str, client: Client | None, undo: tuple[str, str] | None = None, **extra: Any
) -> None:
    """Email the owner that `notice` happened (security_notice: time, address, browser), with
    the lock link and, for `undo` = (action, object id), the undo link."""
    context = notice_context(notice, client=client, at=timezone.now(), **extra)
    context["lock_url"] = link_url(link_token(user=user, action=LOCK))
    if undo is not None:
        context["undo_url"] = link_url(link_token(user=user, action=undo[0], target=undo[1]))
    email_enqueue(user=user, kind=kinds.SECURITY_NOTICE, context=context)


def link_use(link: SecurityLink, *, client: Client) -> str:
    """Do what the link says (once): "locked", "passkeyRemoved" or "apiKeyRevoked"."""
    if link.action == LOCK:
        account_lock(user=link.user, client=client, issued_at=link.issued_at)
        return "locked"
    if link.action == UNDO_PASSKEY:
        with transaction.atomic():
            User.objects.select_for_update().filter(pk=link.user.pk).first()
            passkey = Passkey.objects.filter(user=link.user, id=link.target).first()
            if passkey is None:
                raise LinkUsed()
            if not link.user.has_usable_password() and link.user.passkeys.count() <= 1:
                raise Conflict(
                    "This passkey is the account's only way to sign in; lock the account instead.",
                    code="last_factor",
                )
            passkey.delete()
        logger.info("Passkey removed by an emailed undo link: account=%s ip=%s", link.user.public_id, client.ip)
        return "passkeyRemoved"
    revoked = ApiKey.objects.filter(user=link.user, id=link.target, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    if not revoked:
        raise LinkUsed()
    logger.info("API key revoked by an emailed undo link: account=%s ip=%s", link.user.public_id, client.ip)
    return "apiKeyRevoked"


def account_lock(*, user: User, client: Client, issued_at: datetime | None = None) -> None:
    """End every session, revoke every API key and refuse every sign-in until a password reset
    (passwords.password_forgot_complete clears the lock). A lock link issued before the
    account's last lock is spent (LinkUsed)."""
    now = timezone.now()
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=user.pk)
        if issued_at is not None and locked.locked_at is not None and locked.locked_at >= issued_at:
            raise LinkUsed()
        locked.set_unusable_password()  # a new hash: every session's auth hash stops matching
        locked.locked_at = now
        locked.save(update_fields=["password", "locked_at"])
        ApiKey.objects.filter(user=locked, revoked_at__isnull=True).update(revoked_at=now)
        email_enqueue(
            user=locked, kind=kinds.SECURITY_NOTICE, context=notice_context("account_locked", client=client, at=now)
        )
    logger.warning("Account locked by its owner's emailed link: account=%s ip=%s", user.public_id, client.ip)

"""Emailed codes: ten characters of Crockford's base 32 in two groups of five
("7KQ2M-X9FHD"), issued through the notifications outbox, stored as a keyed hash, single use,
AUTH_EMAIL_CODE_MINUTES of life, AUTH_EMAIL_CODE_MAX_TRIES tries, compared in constant time.

Typing one is forgiving: any case, spaces and hyphens anywhere, and the letters people take
for digits (I and L for 1, O for 0) read as those digits; the alphabet has no I, L, O or U.
32**10 = 2**50 codes: docs/accounts.md works out why that outlasts a year of guessing."""

from __future__ import annotations

import hmac
import secrets
from datetime import datetime, timedelta
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext_lazy

from accounts.models import CodePurpose, EmailCode, User
from core.problems import Problem
from notifications import kinds
from notifications.services import email_enqueue

CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 10
CODE_GROUP = 5
_READ_AS = str.maketrans({"I": "1", "L": "1", "O": "0", "-": None})


def code_make() -> str:
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    return "-".join(raw[i : i + CODE_GROUP] for i in range(0, CODE_LENGTH, CODE_GROUP))


def code_normalize(code: str) -> str:
    """A code as typed, as it was made: "7kq2m x9fhd" and "7KQ2M-X9FHD" are the same code."""
    return "".join((code or "").upper().split()).translate(_READ_AS)


class CodeInvalid(Problem):
    default_code = "invalid_code"
    default_detail = gettext_lazy("The code is wrong, expired or already used. Ask for a new one.")


def _hash(code_id: UUID, code: str) -> str:
    # Keyed with SECRET_KEY and the row id: a leaked table alone gives no code away.
    return salted_hmac("accounts.email-code", f"{code_id}:{code_normalize(code)}", algorithm="sha256").hexdigest()


def email_code_issue(
    *, email: str, purpose: CodePurpose, user: User | None = None, payload: dict | None = None
) -> EmailCode:
    """Write a code and its email (in the caller's transaction); earlier unused codes of the
    same purpose for the address stop working."""
    code = code_make()
    now = timezone.now()
    with transaction.atomic():
        EmailCode.objects.filter(email=email, purpose=purpose, used_at__isnull=True).update(used_at=now)
        row = EmailCode(
            email=email,
            user=user,
            purpose=purpose,
            payload=payload or {},
            expires_at=now + timedelta(minutes=settings.AUTH_EMAIL_CODE_MINUTES),
        )
        row.code_hash = _hash(row.id, code)
        row.save()
        email_enqueue(
            to=email,
            user=user,
            kind=kinds.EMAIL_CODE,
            context={"purpose": str(purpose), "code": code, "minutes": settings.AUTH_EMAIL_CODE_MINUTES},
        )
    return row


def email_code_redeem(*, code_id: UUID | str | None, code: str, purpose: CodePurpose, now: datetime | None = None):
    """Use a code once. A wrong guess counts a try (kept even though the call fails); the last
    allowed wrong guess ends the code. Raises CodeInvalid for wrong, expired, used or unknown."""
    now = now or timezone.now()
    ok = False
    row = None
    if code_id:
        with transaction.atomic():
            row = EmailCode.objects.select_for_update().filter(id=code_id, purpose=purpose).first()
            if row is not None and row.used_at is None and row.expires_at > now:
                ok = hmac.compare_digest(row.code_hash, _hash(row.id, code))
                row.tries += 1
                if ok or row.tries >= settings.AUTH_EMAIL_CODE_MAX_TRIES:
                    row.used_at = now
                row.save(update_fields=["tries", "used_at"])
    if not ok:
        raise CodeInvalid(field="code")
    return row


def email_codes_purge(*, now: datetime | None = None, keep: timedelta = timedelta(days=1)) -> int:
    """Delete codes that ended (used or expired) over a day ago, with what they carried (a
    pending registration's password hash). Bounded and safe to run twice."""
    now = now or timezone.now()
    ids = list(EmailCode.objects.filter(expires_at__lt=now - keep).values_list("id", flat=True)[:5000])
    deleted, _ = EmailCode.objects.filter(id__in=ids).delete()
    return deleted

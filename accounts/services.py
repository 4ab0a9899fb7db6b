"""Writes for accounts and API keys."""

from __future__ import annotations

import hashlib
import secrets
import string
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.codes import CodeInvalid
from accounts.models import ApiKey, User
from accounts.scopes import ALL_SCOPES
from accounts.security_links import UNDO_API_KEY, change_notice
from accounts.sessions import Client
from accounts.stepup import step_up_require
from core.problems import Conflict

KEY_PREFIX = "pdk_"
# A test key (accounts.modes) says so in its first characters, as Stripe's sk_test_ do.
TEST_KEY_PREFIX = "pdk_test_"
KEY_RANDOM_LENGTH = 40
PREFIX_LENGTH = len(KEY_PREFIX) + 8
_BASE62 = string.ascii_letters + string.digits
LAST_USED_RESOLUTION = timedelta(seconds=60)


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    key: str  # shown once, never stored


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def user_get_or_create(*, email: str) -> User:
    email = User.objects.normalize_email(email).lower()
    user = User.objects.filter(email=email).first()
    return user or User.objects.create_user(email)


def api_key_create(
    *, user: User, name: str, scopes: list[str], expires_at: datetime | None = None, livemode: bool = True
) -> IssuedKey:
    unknown = sorted(set(scopes) - set(ALL_SCOPES))
    if unknown:
        raise ValueError(f"Unknown scopes: {', '.join(unknown)}")
    key = (KEY_PREFIX if livemode else TEST_KEY_PREFIX) + "".join(
        secrets.choice(_BASE62) for _ in range(KEY_RANDOM_LENGTH)
    )
    with transaction.atomic():
        # The account's row lock makes concurrent creations count one after another.
        User.objects.select_for_update().filter(pk=user.pk).first()
        _api_keys_below_cap(user=user)
        api_key = ApiKey.objects.create(
            user=user,
            name=name,
            prefix=key[:PREFIX_LENGTH],
            key_hash=hash_key(key),
            scopes=sorted(set(scopes), key=ALL_SCOPES.index),
            expires_at=expires_at,
            livemode=livemode,
        )
    return IssuedKey(api_key=api_key, key=key)


def api_key_issue(
    request,
    *,
    user: User,
    client: Client,
    name: str,
    scopes: list[str],
    expires_at: datetime | None = None,
    livemode: bool = True,
) -> IssuedKey:
    """A person's new key (REST and the dashboard): needs step-up (accounts.stepup); the owner
    is emailed, with a link that revokes the key and one that locks the account."""
    step_up_require(request)
    with transaction.atomic():
        issued = api_key_create(user=user, name=name, scopes=scopes, expires_at=expires_at, livemode=livemode)
        change_notice(
            user=user,
            notice="api_key_created",
            client=client,
            undo=(UNDO_API_KEY, str(issued.api_key.id)),
            name=issued.api_key.name or issued.api_key.prefix,
        )
    return issued


def _api_keys_below_cap(*, user: User) -> None:
    """Refuse a key past API_KEYS_PER_ACCOUNT_MAX usable ones: keys would multiply the
    per-key rate limits. Revoked and expired keys do not count."""
    cap = settings.API_KEYS_PER_ACCOUNT_MAX
    usable = (
        ApiKey.objects.filter(user=user, revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
        .count()
    )
    if usable >= cap:
        raise Conflict(
            f"This account already has {usable} active API keys, the most allowed ({cap}); revoke one first.",
            code="api_key_limit_reached",
            extra={"maxApiKeys": cap},
        )


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    with transaction.atomic():
        ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    api_key.refresh_from_db()
    return api_key


def api_key_touch(*, api_key: ApiKey) -> None:
    """Record use, at most once a minute per key, in one UPDATE."""
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at >= LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now


def account_create(*, email: str, password_hash: str | None = None, public_id=None) -> User:
    """A new account for a verified address. A concurrent registration of the same address
    makes the code invalid rather than a 500."""
    try:
        with transaction.atomic():
            user = User(email=email)
            if public_id is not None:
                user.public_id = public_id
            if password_hash:
                user.password = password_hash
            else:
                user.set_unusable_password()
            user.save()
            return user
    except IntegrityError:
        raise CodeInvalid(field="code") from None

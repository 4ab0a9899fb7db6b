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
from audit import services as audit
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
    *,
    user: User,
    name: str,
    scopes: list[str],
    expires_at: datetime | None = None,
    livemode: bool = True,
    created_by: User | None = None,
) -> IssuedKey:
    """A new key of the organization `user`, made by the person `created_by` (the
    organization's own person when not named)."""
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
            created_by=created_by or user,
        )
        audit.record(
            organization=user,
            action="api_key.created",
            changes={"key": api_key.id, "name": name, "prefix": api_key.prefix, "scopes": api_key.scopes},
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
        issued = api_key_create(
            user=user,
            name=name,
            scopes=scopes,
            expires_at=expires_at,
            livemode=livemode,
            created_by=getattr(request, "person", None),  # who signed in; `user` is the organization
        )
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
        if ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now()):
            audit.record(
                organization=api_key.user_id,
                action="api_key.revoked",
                changes={"key": api_key.id, "name": api_key.name, "prefix": api_key.prefix},
            )
    api_key.refresh_from_db()
    return api_key


def api_key_rotate(request, *, api_key: ApiKey, client: Client, now: datetime | None = None) -> IssuedKey:
    """Replace a key: a new one with its name, scopes, mode and lifetime, issued as any new key
    (step-up, the owner emailed), and the old one revoked in the same transaction (first, so the
    key cap counts the new one in its place)."""
    step_up_require(request)
    now = now or timezone.now()
    with transaction.atomic():
        locked = ApiKey.objects.select_for_update().filter(pk=api_key.pk, revoked_at__isnull=True).first()
        if locked is None:
            raise Conflict("This key is already revoked.", code="api_key_revoked")
        lifetime = locked.expires_at - locked.created_at if locked.expires_at is not None else None
        api_key_revoke(api_key=locked)
        return api_key_issue(
            request,
            user=locked.user,
            client=client,
            name=locked.name,
            scopes=list(locked.scopes),
            expires_at=now + lifetime if lifetime is not None else None,
            livemode=locked.livemode,
        )


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

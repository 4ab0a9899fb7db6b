"""Reads for accounts and API keys."""

from __future__ import annotations

import hmac

from django.db.models import QuerySet

from accounts.models import ApiKey, User
from accounts.services import KEY_PREFIX, PREFIX_LENGTH, hash_key
from core.sql.rows import RowReader

# Every request looks its key up: the statement (key joined to its user) is built once.
_KEYS_BY_PREFIX = RowReader(ApiKey, by=["prefix"], related="user")


def api_key_list(*, user: User) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(user=user, revoked_at__isnull=True)


def api_key_find(*, key: str) -> ApiKey | None:
    """The key record for a presented key, compared in constant time; None if unknown."""
    if not key.startswith(KEY_PREFIX) or len(key) > 100:
        return None
    presented = hash_key(key)
    found = None
    for candidate in _KEYS_BY_PREFIX.fetch(key[:PREFIX_LENGTH]):
        if hmac.compare_digest(candidate.key_hash, presented):
            found = candidate
    return found


def account_summary(*, user: User) -> dict:
    """The account as the API and pages show it (ids are UUIDs)."""
    from accounts.totp import totp_enabled

    return {
        "id": user.public_id,
        "email": user.email,
        "createdAt": user.date_joined,
        "hasPassword": user.has_usable_password(),
        "totpEnabled": totp_enabled(user=user),
        "passkeys": list(user.passkeys.all()),
    }

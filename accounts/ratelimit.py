"""Attempt limits for guessable things: passwords, emailed codes, TOTP codes.

Each attempt counts against the account (by email address, known or not, so the limit
itself tells nothing) and against the client's IP address, in one-minute windows in the
shared cache. Over the limit: 429 with Retry-After. The first time an existing account's
window overflows, its owner is emailed a lockout notice and the operator's log says so
(without the address or any secret)."""

from __future__ import annotations

import hashlib
import logging
import time

from django.conf import settings
from django.core.cache import cache

from config.problems import TooManyRequests

logger = logging.getLogger("accounts.security")

WINDOW_SECONDS = 60


class TooManyAttempts(TooManyRequests):
    default_code = "too_many_attempts"
    default_detail = "Too many attempts; wait a minute and try again."


def _count(key: str) -> int:
    cache.add(key, 0, timeout=WINDOW_SECONDS + 1)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=WINDOW_SECONDS + 1)
        return 1


def account_key(email: str) -> str:
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]


def attempt_count(*, action: str, email: str | None, ip: str, on_lockout=None) -> None:
    """Count one attempt of `action` ("login", "code", "totp"); raise TooManyAttempts over the
    limit. `on_lockout` runs once per window, when the account's count first passes it."""
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    limit = settings.AUTH_ATTEMPTS_PER_MINUTE
    retry_after = max(1, int((window + 1) * WINDOW_SECONDS - now + 0.999))
    over = False
    if email:
        count = _count(f"auth-attempts:{action}:account:{account_key(email)}:{window}")
        if count > limit:
            over = True
            if count == limit + 1:
                logger.warning("Attempt limit reached: action=%s account=%s ip=%s", action, account_key(email)[:12], ip)
                if on_lockout is not None:
                    on_lockout()
    if _count(f"auth-attempts:{action}:ip:{ip}:{window}") > limit:
        over = True
    if over:
        raise TooManyAttempts(retry_after=retry_after)

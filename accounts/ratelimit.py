"""Limits on guessing (passwords, emailed codes, TOTP codes) and on requests that email an
address, laid out so that nobody can use them to lock an owner out.

A guess counts, in one-minute windows in the shared cache, first against the client's IP
address (AUTH_ADDRESS_ATTEMPTS_PER_MINUTE, every account together), then against the pair of
account and address (AUTH_ATTEMPTS_PER_MINUTE), then against the account: a browser that
signed in to the account before (its device cookie, `accounts.sessions.device_known`) has
a budget of its own (AUTH_ATTEMPTS_PER_MINUTE), every other browser shares the account's
pool (AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE, set above the per-address limit). The counting
stops at the first limit passed, so an attacker's address runs out before it reaches the
pool, and no attacker reaches the budget of the owner's browser. A right answer gives its
counts back (`Attempt.succeeded`): only failures are limited. The account is its address,
hashed, whether it has an account or not, so a limit tells nothing about that. The first
time in an hour an account's pool overflows, its owner is emailed a notice; the operator's
log records every limit reached (without the address or any secret).

Requests that email an address (a code, or the notice sent instead) count per IP address
(AUTH_ATTEMPTS_PER_MINUTE, then 429) and per address and purpose in one-hour windows:
past AUTH_CODE_EMAILS_PER_HOUR nothing more is sent that hour (the requester's answer does
not change), again with a budget of its own for each browser that signed in before. Each
purpose has its own count, so asking for resets never holds up a sign-in code.
docs/accounts.md works out what these limits allow a guesser in a year.

These counts fail closed: with the cache down, a guess (and a request for a code) is refused
with 503 `cache_unavailable` rather than counted per process, since N processes counting
apart would give a guesser N times the budget those figures rest on. Unlike the API's rate
limits (core.cache.LocalWindows), which fall back; docs/operations.md, "When Redis is down"."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.core.cache import cache

from accounts.sessions import device_known
from core.cache import window_count
from core.problems import TooManyRequests

logger = logging.getLogger("accounts.security")

WINDOW_SECONDS = 60
EMAIL_WINDOW_SECONDS = 3600
NOTICE_SECONDS = 3600  # at most one lockout email an hour per account


class TooManyAttempts(TooManyRequests):
    default_code = "too_many_attempts"
    default_detail = "Too many attempts; wait a minute and try again."


def _count(key: str, window_seconds: int) -> int:
    """One more on the window's counter, and the count it reached, in one atomic step (Redis:
    INCR and EXPIRE in one MULTI; the file cache: under its lock): each of many guesses
    arriving together gets a count of its own, so exactly the limit passes."""
    return window_count(key, timeout=window_seconds + 1, fail_closed=True)


def _retry_after(now: float, window_seconds: int) -> int:
    return max(1, int((int(now // window_seconds) + 1) * window_seconds - now + 0.999))


def account_key(email: str) -> str:
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]


def _device_key(email: str, device: str) -> str | None:
    """The browser's own key when it signed in to this account before, else None."""
    if device and device_known(email=email, device=device):
        return hashlib.sha256(device.encode()).hexdigest()[:32]
    return None


@dataclass
class Attempt:
    """The counts one attempt added; `succeeded()` takes them back."""

    keys: list[str] = field(default_factory=list)

    def succeeded(self) -> None:
        for key in self.keys:
            try:
                cache.decr(key)
            except ValueError:  # the window ended meanwhile
                pass
        self.keys = []


def attempt_count(
    *,
    action: str,
    email: str | None,
    ip: str,
    device: str = "",
    on_lockout: Callable[[], None] | None = None,
) -> Attempt:
    """Count one guess of `action` ("login", "code", "reset", "totp") by the client at `ip`
    (with the device cookie `device`, if any) on the account of `email` (None: not known yet).
    Raises TooManyAttempts past a limit; call `succeeded()` on the result when the guess was
    right. `on_lockout` runs when the account's pool first overflows, at most once an hour."""
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    buckets: list[tuple[str, int]] = [(f"ip:{ip}", settings.AUTH_ADDRESS_ATTEMPTS_PER_MINUTE)]
    account = account_key(email) if email else None
    if email and account:
        buckets.append((f"account-ip:{account}:{ip}", settings.AUTH_ATTEMPTS_PER_MINUTE))
        device_key = _device_key(email, device)
        if device_key:
            buckets.append((f"account-device:{account}:{device_key}", settings.AUTH_ATTEMPTS_PER_MINUTE))
        else:
            buckets.append((f"account:{account}", settings.AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE))
    attempt = Attempt()
    for name, limit in buckets:
        key = f"auth-attempts:{action}:{name}:{window}"
        count = _count(key, WINDOW_SECONDS)
        attempt.keys.append(key)
        if count > limit:
            if count == limit + 1 and account:
                scope = name.split(":", 1)[0]
                logger.warning(
                    "Attempt limit reached: action=%s scope=%s account=%s ip=%s", action, scope, account[:12], ip
                )
                if (
                    scope == "account"
                    and on_lockout is not None
                    and cache.add(f"auth-lockout-notice:{account}", 1, timeout=NOTICE_SECONDS)
                ):
                    on_lockout()
            raise TooManyAttempts(retry_after=_retry_after(now, WINDOW_SECONDS))
    return attempt


def code_email_allowed(*, purpose: str, email: str, ip: str, device: str = "") -> bool:
    """Count a request that emails `email` for `purpose` ("register", "login",
    "password_reset"). Raises TooManyAttempts past the IP address's per-minute limit (the same
    for every address); returns False, and the caller sends nothing but answers the same,
    once the address had AUTH_CODE_EMAILS_PER_HOUR such emails for `purpose` this hour."""
    now = time.time()
    if _count(f"auth-emails:ip:{ip}:{int(now // WINDOW_SECONDS)}", WINDOW_SECONDS) > settings.AUTH_ATTEMPTS_PER_MINUTE:
        raise TooManyAttempts(retry_after=_retry_after(now, WINDOW_SECONDS))
    account = account_key(email)
    budget = _device_key(email, device) or "others"
    hour = int(now // EMAIL_WINDOW_SECONDS)
    count = _count(f"auth-emails:{purpose}:{account}:{budget}:{hour}", EMAIL_WINDOW_SECONDS)
    limit = settings.AUTH_CODE_EMAILS_PER_HOUR
    if count > limit:
        if count == limit + 1:
            logger.warning("Email limit reached: purpose=%s account=%s ip=%s", purpose, account[:12], ip)
        return False
    return True


class TooManyCodes(TooManyRequests):
    default_code = "too_many_codes"
    default_detail = (
        "Too many codes were emailed to this address in the last hour. Wait, or sign in with a passkey "
        "or from a browser you signed in with before."
    )


def code_email_require(*, purpose: str, email: str, ip: str, device: str = "") -> None:
    """`code_email_allowed`, for a step that cannot go on without the email: TooManyCodes."""
    if not code_email_allowed(purpose=purpose, email=email, ip=ip, device=device):
        raise TooManyCodes(retry_after=_retry_after(time.time(), EMAIL_WINDOW_SECONDS))

"""The browser session: signing in (key rotated, time of authentication kept for
re-authentication checks, new devices noticed), state of a sign-in in progress (bound to the
session, short-lived) and signing out. Works on a Django HttpRequest (or DRF's, which wraps it)."""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import login, logout
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import KnownDevice, User
from accounts.stepup import step_up_record
from audit import services as audit
from core.problems import PermissionDenied
from core.wire import json_datetime
from notifications import kinds
from notifications.services import email_enqueue

logger = logging.getLogger("accounts.security")

PENDING = "accounts.pending"
AUTH_AT = "accounts.auth_at"
METHOD = "accounts.method"
# What the sign-in proved besides a password: "totp" (the authenticator app or a recovery
# code), "email" (an emailed code) or "passkey" (a user-verified passkey: the device and its
# PIN or biometric). An emailed code is a second step, not a second factor: whoever reads
# the mailbox can also reset the password.
SECOND_FACTOR = "accounts.second_factor"
DEVICE_COOKIE = "pd_device"
DEVICE_COOKIE_AGE = 400 * 24 * 3600
PENDING_SECONDS = 15 * 60
BACKEND = "django.contrib.auth.backends.ModelBackend"


@dataclass(frozen=True)
class Client:
    """Who is asking, as far as the request tells: for limits, notices and the operator's log."""

    ip: str
    user_agent: str = ""
    device: str = ""  # the device cookie, if the browser has one


def client_ip(meta) -> str:
    """REST's rule (DRF's get_ident): the socket's peer, or, behind NUM_PROXIES trusted reverse
    proxies, the X-Forwarded-For entry the nearest of them added. A client cannot spoof it."""
    remote = meta.get("REMOTE_ADDR") or "unknown"
    proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    if proxies and forwarded:
        addresses = forwarded.split(",")
        return addresses[-min(proxies, len(addresses))].strip() or remote
    return remote


def client_of(request) -> Client:
    meta = request.META
    return Client(
        ip=client_ip(meta),
        user_agent=(meta.get("HTTP_USER_AGENT") or "")[:200],
        device=(request.COOKIES.get(DEVICE_COOKIE) or "")[:100],
    )


# --- A sign-in in progress ---------------------------------------------------------------


def pending_set(request, *, flow: str, **data: Any) -> None:
    request.session[PENDING] = {"flow": flow, "at": time.time(), **data}


def pending_get(request, *, flow: str) -> dict[str, Any] | None:
    pending = request.session.get(PENDING)
    if not pending or pending.get("flow") != flow or time.time() - pending.get("at", 0) > PENDING_SECONDS:
        return None
    return pending


def pending_clear(request) -> None:
    request.session.pop(PENDING, None)


# --- Signing in and out ------------------------------------------------------------------


def _device_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def session_sign_in(
    request, *, user: User, method: str, client: Client, first: bool = False, second_factor: str | None = None
) -> str:
    """Log the user in (a new session key, a new CSRF token), remember when and how, and
    email the owner about a device that never signed in to this account before (not for the
    sign-in that creates the account). Returns the device token the response must set."""
    pending_clear(request)
    login(request, user, backend=BACKEND)
    request.session[AUTH_AT] = time.time()
    request.session[METHOD] = method
    request.session[SECOND_FACTOR] = second_factor
    if second_factor in ("totp", "passkey"):
        step_up_record(request)
    token = client.device or secrets.token_urlsafe(24)
    now = timezone.now()
    audit.record(organization=user, action="session.signed_in", person=user, ip=client.ip, changes={"method": method})
    device_hash = _device_hash(token)
    with transaction.atomic():
        known = KnownDevice.objects.filter(user=user, device_hash=device_hash).update(last_seen_at=now)
        if not known:
            had_devices = KnownDevice.objects.filter(user=user).exists()
            try:
                with transaction.atomic():
                    KnownDevice.objects.create(user=user, device_hash=device_hash, first_seen_at=now, last_seen_at=now)
            except IntegrityError:  # the same browser signing in twice at once
                had_devices = False
            if had_devices and not first:
                logger.info("Sign-in from a new device: account=%s ip=%s", user.public_id, client.ip)
                email_enqueue(
                    user=user,
                    kind=kinds.SECURITY_NOTICE,
                    context=notice_context("new_device", client=client, at=now),
                )
    return token


def device_known(*, email: str, device: str) -> bool:
    """Whether the browser with this device cookie signed in to the account of `email` before."""
    if not device:
        return False
    return KnownDevice.objects.filter(
        user__email=email, user__is_active=True, user__deleted_at__isnull=True, device_hash=_device_hash(device)
    ).exists()


def device_cookie_set(response, token: str) -> None:
    response.set_cookie(
        DEVICE_COOKIE,
        token,
        max_age=DEVICE_COOKIE_AGE,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def session_sign_out(request) -> None:
    logout(request)  # flushes the session: its data and key are gone


class ReauthenticationRequired(PermissionDenied):
    default_code = "reauthentication_required"
    default_detail = "Sign in again (password and second step, or a passkey) and retry within a few minutes."


def authenticated_recently(request) -> bool:
    at = request.session.get(AUTH_AT)
    return bool(at) and time.time() - at <= settings.AUTH_REAUTH_MINUTES * 60


def session_method(request) -> str | None:
    return request.session.get(METHOD)


def two_factor_session(request) -> bool:
    """Signed in with a password and the authenticator app, or with a passkey: what the
    admin asks for."""
    return request.session.get(SECOND_FACTOR) in ("totp", "passkey")


def notice_context(notice: str, *, client: Client | None = None, at=None, **extra: Any) -> dict[str, Any]:
    context: dict[str, Any] = {"notice": notice, **extra}
    if client is not None:
        context.update(ip=client.ip, user_agent=client.user_agent)
    if at is not None:
        context["at"] = json_datetime(at)  # shown in the reader's zone and language (accounts.emails)
    return context

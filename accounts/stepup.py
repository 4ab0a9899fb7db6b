"""Step-up: an action that could hand the account to someone else (adding a passkey, turning
off a second factor, creating an API key, changing the email, the receiving-address lock)
needs a session that proved a second factor within the last ``STEP_UP_MINUTES``.

A sign-in with the authenticator app or a passkey counts as that proof at its time
(``sessions.session_sign_in`` records it); later proofs are recorded with ``step_up_record``:
``POST /api/v1/auth/step-up`` with a code (``totp.totp_step_up``, the sign-in's attempt limits)
or a passkey assertion (``passkeys.passkey_step_up_begin`` / ``passkey_step_up_complete``), the
dashboard's "Confirm it's you" page, turning the authenticator app on (its first code), and
turning it off with a code. An account with no second factor at all cannot prove one: for it a
sign-in (password and emailed code) within the same minutes stands in.

An API key is never a person: a keyed call (``accounts.modes.by_key``) or a request without a
session never satisfies step-up (the authorization table refuses keys on account routes first;
a key reaching a step-up check elsewhere, such as adding to a locked address book, gets 403
step_up_required).
"""

from __future__ import annotations

import time

from django.conf import settings

from accounts.models import Passkey, TotpDevice
from accounts.modes import by_key
from core.problems import PermissionDenied

STEP_UP_AT = "accounts.step_up_at"


class StepUpRequired(PermissionDenied):
    default_code = "step_up_required"
    default_detail = (
        "Confirm it is you: enter a code from your authenticator app or use a passkey, then retry within a few minutes."
    )


def has_second_factor(user) -> bool:
    return TotpDevice.objects.filter(user=user, confirmed=True).exists() or Passkey.objects.filter(user=user).exists()


def step_up_record(request) -> None:
    """The session just proved a second factor (a sign-in with one, or a step-up)."""
    request.session[STEP_UP_AT] = time.time()


def step_up_satisfied(request) -> bool:
    window = settings.STEP_UP_MINUTES * 60
    session = getattr(request, "session", None)
    # The person who signed in (an organization's route has the organization as `user`).
    user = getattr(request, "person", None) or getattr(request, "user", None)
    if session is None or user is None or not user.is_authenticated or by_key(user):
        return False
    at = session.get(STEP_UP_AT)
    if at and time.time() - at <= window:
        return True
    if has_second_factor(user):
        return False
    at = session.get("accounts.auth_at")  # sessions.AUTH_AT: a sign-in within the same minutes
    return bool(at) and time.time() - at <= window


def step_up_require(request) -> None:
    if not step_up_satisfied(request):
        raise StepUpRequired()

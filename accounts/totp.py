"""TOTP second factor (django-otp) and its recovery codes.

A code is checked with the device row locked (SELECT ... FOR UPDATE): django-otp refuses a
code whose time step is not after the last one used, and the lock makes two requests racing
with the same code take turns, so only one of them can succeed. One step (30 s) of clock
drift is tolerated. Recovery codes: ten, shown once, single use, stored as SHA-256."""

from __future__ import annotations

import base64
import hashlib
import io
import secrets
from dataclasses import dataclass

import segno
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy

from accounts.models import RecoveryCode, TotpDevice, User
from accounts.ratelimit import attempt_count
from accounts.security_links import change_notice
from accounts.sessions import Client, notice_context
from accounts.stepup import step_up_record, step_up_require
from audit import services as audit
from core.problems import Conflict, Problem
from notifications import kinds
from notifications.services import email_enqueue

RECOVERY_CODES = 10
_RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no look-alikes (0/o, 1/l/i)


class TotpCodeInvalid(Problem):
    default_code = "invalid_code"
    default_detail = gettext_lazy("The code is wrong, already used or out of time.")


@dataclass(frozen=True)
class TotpSetup:
    otpauth_uri: str
    secret: str  # base32, for typing into an app by hand
    qr_svg: str


def totp_enabled(*, user: User) -> bool:
    return TotpDevice.objects.filter(user=user, confirmed=True).exists()


def totp_setup(*, user: User, renew: bool = True) -> TotpSetup:
    """The unconfirmed device to confirm with a code from the app. `renew`: a new key, replacing
    an earlier unconfirmed one; otherwise the pending key is kept (a mistyped code is tried again
    against the same key) and a new one is made only when there is none."""
    if totp_enabled(user=user):
        raise Conflict("An authenticator app is already on; turn it off first.", code="totp_already_enabled")
    with transaction.atomic():
        pending = None if renew else TotpDevice.objects.filter(user=user, confirmed=False).first()
        if pending is None:
            TotpDevice.objects.filter(user=user, confirmed=False).delete()
            pending = TotpDevice.objects.create(user=user, name="Authenticator app", confirmed=False, tolerance=1)
    return _setup_of(pending)


def totp_pending(*, user: User) -> TotpSetup | None:
    """The key set up and not yet confirmed (stored encrypted, as every device's key), if any."""
    device = TotpDevice.objects.filter(user=user, confirmed=False).first()
    return None if device is None else _setup_of(device)


def _setup_of(device: TotpDevice) -> TotpSetup:
    uri = device.config_url
    buf = io.BytesIO()
    segno.make_qr(uri, error="m").save(buf, kind="svg", xmldecl=False, svgns=True, scale=4, border=4)
    return TotpSetup(
        otpauth_uri=uri,
        secret=base64.b32encode(device.bin_key).decode("ascii").rstrip("="),
        qr_svg=buf.getvalue().decode("utf-8"),
    )


def _device_verify(*, user: User, code: str, confirmed: bool) -> bool:
    code = (code or "").strip().replace(" ", "")
    if not (code.isdigit() and len(code) == 6):
        return False
    with transaction.atomic():
        device = TotpDevice.objects.select_for_update().filter(user=user, confirmed=confirmed).first()
        return device is not None and device.verify_token(code)


def _recovery_hash(code: str) -> str:
    return hashlib.sha256(code.strip().lower().replace("-", "").replace(" ", "").encode()).hexdigest()


def _recovery_use(*, user: User, code: str) -> bool:
    # A conditional UPDATE claims the code: of two racing requests only one changes the row.
    return bool(
        RecoveryCode.objects.filter(user=user, code_hash=_recovery_hash(code), used_at__isnull=True).update(
            used_at=timezone.now()
        )
    )


def totp_verify(*, user: User, code: str) -> bool:
    """A current TOTP code or an unused recovery code, each usable once."""
    code = (code or "").strip()
    if len(code.replace(" ", "")) == 6:
        return _device_verify(user=user, code=code, confirmed=True)
    return _recovery_use(user=user, code=code)


def _recovery_codes_make(*, user: User) -> list[str]:
    codes = []
    for _ in range(RECOVERY_CODES):
        raw = "".join(secrets.choice(_RECOVERY_ALPHABET) for _ in range(16))
        codes.append("-".join(raw[i : i + 4] for i in range(0, 16, 4)))
    RecoveryCode.objects.filter(user=user).delete()
    RecoveryCode.objects.bulk_create([RecoveryCode(user=user, code_hash=_recovery_hash(c)) for c in codes])
    return codes


def totp_enable(request, *, user: User, code: str, client: Client) -> list[str]:
    """Confirm the device set up last with a code from the app. Returns the recovery codes
    (shown this once). The code is the session's step-up proof too (accounts.stepup)."""
    attempt_count(action="totp", email=user.email, ip=client.ip, device=client.device)
    if totp_enabled(user=user):
        raise Conflict("An authenticator app is already on.", code="totp_already_enabled")
    if not TotpDevice.objects.filter(user=user, confirmed=False).exists():
        raise Conflict("Set up the authenticator app first (POST /api/v1/auth/totp/setup).", code="totp_not_set_up")
    if not _device_verify(user=user, code=code, confirmed=False):
        raise TotpCodeInvalid(field="code")
    with transaction.atomic():
        TotpDevice.objects.filter(user=user, confirmed=False).update(confirmed=True)
        codes = _recovery_codes_make(user=user)
        audit.record(organization=user, action="second_factor.totp_enabled", person=user, ip=client.ip)
        email_enqueue(
            user=user,
            kind=kinds.SECURITY_NOTICE,
            context=notice_context("totp_enabled", client=client, at=timezone.now()),
        )
    step_up_record(request)
    return codes


def totp_disable(request, *, user: User, code: str | None, client: Client) -> None:
    """Needs step-up (accounts.stepup): a current code (or a recovery code) given here is that
    proof; without one, a recent step-up of the session. The owner is emailed, with the link
    that locks the account."""
    if not totp_enabled(user=user):
        raise Conflict("No authenticator app is on.", code="totp_not_enabled")
    if code:
        attempt = attempt_count(action="totp", email=user.email, ip=client.ip, device=client.device)
        if not totp_verify(user=user, code=code):
            raise TotpCodeInvalid(field="code")
        attempt.succeeded()
        step_up_record(request)
    step_up_require(request)
    with transaction.atomic():
        TotpDevice.objects.filter(user=user).delete()
        RecoveryCode.objects.filter(user=user).delete()
        change_notice(user=user, notice="totp_disabled", client=client)
        audit.record(organization=user, action="second_factor.totp_disabled", person=user, ip=client.ip)


def totp_step_up(request, *, user: User, code: str, client: Client) -> None:
    """Step-up with the authenticator app (or a recovery code): the same attempt limits as the
    sign-in's second step; a right code is recorded as the session's proof (accounts.stepup)."""
    attempt = attempt_count(action="totp", email=user.email, ip=client.ip, device=client.device, on_lockout=None)
    if not totp_enabled(user=user):
        raise Conflict("No authenticator app is on; confirm with a passkey.", code="totp_not_enabled", field="code")
    if not totp_verify(user=user, code=code):
        raise TotpCodeInvalid(field="code")
    attempt.succeeded()
    step_up_record(request)

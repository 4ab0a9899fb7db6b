"""Password accounts: registration with an emailed code, sign-in in two steps (password,
then TOTP or an emailed code), forgotten and changed passwords.

No enumeration: registering, signing in and asking for a reset answer the same, after the
same work (one password hash), for addresses with and without an account. Emails go out
after commit through the notifications outbox, so they add no time to the answer."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.hashers import make_password
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy

from accounts import sessions
from accounts.codes import CodeInvalid, email_code_issue, email_code_redeem
from accounts.models import CodePurpose, EmailCode, User
from accounts.ratelimit import attempt_count, code_email_allowed, code_email_require
from accounts.services import account_create
from accounts.sessions import Client
from accounts.totp import totp_enabled, totp_verify
from core.problems import Problem
from notifications import kinds
from notifications.services import email_enqueue


class InvalidCredentials(Problem):
    status_code = 401
    default_code = "invalid_credentials"
    default_detail = gettext_lazy("The email address or password is wrong.")


@dataclass(frozen=True)
class Step:
    """What the client does next: "emailCodeSent", "totpRequired", "signedIn", ..."""

    status: str
    user: User | None = None
    device_token: str | None = None


def email_normalize(email: str) -> str:
    return User.objects.normalize_email(email.strip()).lower()


def active_user(email: str) -> User | None:
    return User.objects.filter(email=email, is_active=True, deleted_at__isnull=True).first()


def password_check_strength(password: str, *, email: str, field: str = "password") -> None:
    try:
        validate_password(password, user=User(email=email))
    except ValidationError as exc:
        errors = [{"field": field, "code": "weak_password", "message": message} for message in exc.messages]
        raise Problem(" ".join(exc.messages), code="weak_password", errors=errors) from None


def lockout_notice(email: str, client: Client):
    """The callback a rate limit runs when an account's attempts first overflow."""

    def notify() -> None:
        user = active_user(email)
        if user is not None:
            email_enqueue(
                user=user,
                kind=kinds.SECURITY_NOTICE,
                context=sessions.notice_context("lockout", client=client, at=timezone.now()),
            )

    return notify


# --- Registration ---------------------------------------------------------------------------


def registration_code_send(
    request, *, email: str, flow: str, client: Client, payload: dict | None = None, send: bool | None = None
) -> None:
    """Email a registration code, or, when the address already has an account, a notice
    instead: the caller's answer is the same either way, and also when the address had its
    emails for the hour (`send` False; None: count this request here)."""
    if send is None:
        send = code_email_allowed(purpose=CodePurpose.REGISTER, email=email, ip=client.ip, device=client.device)
    if not send:
        sessions.pending_set(request, flow=flow, email=email, codeId=None)
        return
    with transaction.atomic():
        user = User.objects.filter(email=email).first()
        if user is None:
            code = email_code_issue(email=email, purpose=CodePurpose.REGISTER, payload=payload)
            sessions.pending_set(request, flow=flow, email=email, codeId=str(code.id))
        else:
            if user.is_active and user.deleted_at is None:
                email_enqueue(
                    user=user,
                    kind=kinds.SECURITY_NOTICE,
                    context=sessions.notice_context("register_attempt", client=client, at=timezone.now()),
                )
            sessions.pending_set(request, flow=flow, email=email, codeId=None)


def password_register_begin(request, *, email: str, password: str, client: Client) -> Step:
    email = email_normalize(email)
    password_check_strength(password, email=email)  # before counting: a refused password sends nothing
    send = code_email_allowed(purpose=CodePurpose.REGISTER, email=email, ip=client.ip, device=client.device)
    password_hash = make_password(password)
    registration_code_send(
        request,
        email=email,
        flow="password_register",
        client=client,
        payload={"passwordHash": password_hash},
        send=send,
    )
    return Step("emailCodeSent")


def password_register_complete(request, *, code: str, client: Client) -> Step:
    pending = sessions.pending_get(request, flow="password_register") or {}
    attempt = attempt_count(action="code", email=pending.get("email"), ip=client.ip, device=client.device)
    row = email_code_redeem(code_id=pending.get("codeId"), code=code, purpose=CodePurpose.REGISTER)
    attempt.succeeded()
    user = account_create(email=row.email, password_hash=row.payload.get("passwordHash"))
    EmailCode.objects.filter(pk=row.pk).update(payload={})
    token = sessions.session_sign_in(request, user=user, method="password", client=client, first=True)
    return Step("signedIn", user=user, device_token=token)


# --- Sign-in --------------------------------------------------------------------------------


def password_login_begin(request, *, email: str, password: str, client: Client) -> Step:
    email = email_normalize(email)
    attempt = attempt_count(
        action="login", email=email, ip=client.ip, device=client.device, on_lockout=lockout_notice(email, client)
    )
    user = active_user(email)
    if user is None or not user.has_usable_password():
        make_password(password)  # the same work as checking a real password
        raise InvalidCredentials()
    if not user.check_password(password):  # re-hashes an older hash with Argon2 when it matches
        raise InvalidCredentials()
    attempt.succeeded()
    if totp_enabled(user=user):
        sessions.pending_set(request, flow="password_login", user=str(user.public_id), second="totp")
        return Step("totpRequired")
    code_email_require(purpose=CodePurpose.LOGIN, email=email, ip=client.ip, device=client.device)
    code = email_code_issue(email=email, purpose=CodePurpose.LOGIN, user=user)
    sessions.pending_set(request, flow="password_login", user=str(user.public_id), second="email", codeId=str(code.id))
    return Step("emailCodeSent")


def password_login_complete(request, *, code: str, client: Client) -> Step:
    pending = sessions.pending_get(request, flow="password_login")
    user = active_user_by_public_id(pending.get("user")) if pending else None
    email = user.email if user else None
    second = "totp" if pending and pending.get("second") == "totp" else "email"
    action = "totp" if second == "totp" else "code"
    attempt = attempt_count(
        action=action, email=email, ip=client.ip, device=client.device, on_lockout=lockout_notice(email or "", client)
    )
    if action == "totp":
        if user is None or not totp_verify(user=user, code=code):
            raise CodeInvalid(field="code")
    else:
        email_code_redeem(code_id=(pending or {}).get("codeId"), code=code, purpose=CodePurpose.LOGIN)
        if user is None:
            raise CodeInvalid(field="code")
    attempt.succeeded()
    token = sessions.session_sign_in(request, user=user, method="password", client=client, second_factor=second)
    return Step("signedIn", user=user, device_token=token)


def active_user_by_public_id(public_id: str | None) -> User | None:
    if not public_id:
        return None
    return User.objects.filter(public_id=public_id, is_active=True, deleted_at__isnull=True).first()


# --- Forgotten and changed passwords ---------------------------------------------------------


def password_forgot_begin(*, email: str, client: Client) -> Step:
    """Email a reset code, or a notice to an address without an account. Past the address's
    emails for the hour nothing is sent; the answer is the same in every case."""
    email = email_normalize(email)
    if not code_email_allowed(purpose=CodePurpose.PASSWORD_RESET, email=email, ip=client.ip, device=client.device):
        return Step("emailCodeSent")
    user = active_user(email)
    if user is not None:
        email_code_issue(email=email, purpose=CodePurpose.PASSWORD_RESET, user=user)
    else:
        # The same work either way (an outbox row, a task after commit), so the answer's
        # timing tells nothing; the address learns that someone asked.
        email_enqueue(to=email, kind=kinds.SECURITY_NOTICE, context=sessions.notice_context("reset_no_account"))
    return Step("emailCodeSent")


def password_forgot_complete(*, email: str, code: str, new_password: str, client: Client) -> Step:
    """Set a new password with an emailed code. Every session of the account ends (the
    session hash changes with the password)."""
    email = email_normalize(email)
    password_check_strength(new_password, email=email, field="newPassword")
    # Guesses at reset codes count apart from sign-in ("reset"): they never hold up a sign-in.
    attempt = attempt_count(
        action="reset", email=email, ip=client.ip, device=client.device, on_lockout=lockout_notice(email, client)
    )
    latest = (
        EmailCode.objects.filter(email=email, purpose=CodePurpose.PASSWORD_RESET, used_at__isnull=True)
        .order_by("-created_at")
        .values_list("id", flat=True)
        .first()
    )
    row = email_code_redeem(code_id=latest, code=code, purpose=CodePurpose.PASSWORD_RESET)
    attempt.succeeded()
    with transaction.atomic():
        user = User.objects.select_for_update().filter(pk=row.user_id, is_active=True, deleted_at__isnull=True).first()
        if user is None:
            raise CodeInvalid(field="code")
        user.set_password(new_password)
        user.locked_at = None  # a reset is how a locked account (accounts.security_links) opens again
        user.save(update_fields=["password", "locked_at"])
        email_enqueue(
            user=user,
            kind=kinds.SECURITY_NOTICE,
            context=sessions.notice_context("password_reset", client=client, at=timezone.now()),
        )
    return Step("passwordReset", user=user)


class WrongPassword(Problem):
    default_code = "wrong_password"
    default_detail = gettext_lazy("The current password is wrong.")


def password_change(request, *, user: User, current_password: str, new_password: str, client: Client) -> Step:
    """Needs the current password (an account without one sets its first password here with
    an empty current password). This session stays signed in; every other one ends."""
    attempt = attempt_count(
        action="login",
        email=user.email,
        ip=client.ip,
        device=client.device,
        on_lockout=lockout_notice(user.email, client),
    )
    if user.has_usable_password() and not user.check_password(current_password or ""):
        raise WrongPassword(field="currentPassword")
    attempt.succeeded()
    if not user.has_usable_password() and not sessions.authenticated_recently(request):
        raise sessions.ReauthenticationRequired()
    password_check_strength(new_password, email=user.email, field="newPassword")
    with transaction.atomic():
        user.set_password(new_password)
        user.save(update_fields=["password"])
        email_enqueue(
            user=user,
            kind=kinds.SECURITY_NOTICE,
            context=sessions.notice_context("password_changed", client=client, at=timezone.now()),
        )
    update_session_auth_hash(request, user)  # a new session key; other sessions' hash no longer matches
    return Step("passwordChanged", user=user)

"""Passkeys (WebAuthn, Duo Labs' py_webauthn): registration for a signed-in account or a new
one (its address verified by an emailed code first) and usernameless sign-in with
discoverable credentials.

Challenges live in the session, are single use and expire after WEBAUTHN_CHALLENGE_SECONDS.
The RP ID is BASE_URL's host and the expected origin BASE_URL's scheme, host and port. User
verification is required; a signature count that does not grow (when the authenticator
keeps one) is refused as a possibly cloned authenticator."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import bytes_to_base64url
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse, WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from accounts import sessions
from accounts.codes import email_code_redeem
from accounts.models import CodePurpose, Passkey, UsedPasskeyChallenge, User
from accounts.passwords import (
    InvalidCredentials,
    Step,
    active_user_by_public_id,
    email_normalize,
    registration_code_send,
)
from accounts.ratelimit import attempt_count
from accounts.security_links import UNDO_PASSKEY, change_notice
from accounts.services import account_create
from accounts.sessions import Client
from accounts.stepup import step_up_record, step_up_require
from audit import services as audit
from core.problems import Conflict, NotFound, Problem

logger = logging.getLogger("accounts.security")

CHALLENGE = "accounts.webauthn"
# The spec's AuthenticatorTransport spellings, and WebAuthn's own.
_TRANSPORTS = {
    "usb": "usb",
    "nfc": "nfc",
    "ble": "ble",
    "smartcard": "smart-card",
    "smart-card": "smart-card",
    "hybrid": "hybrid",
    "internal": "internal",
}


class PasskeyInvalid(Problem):
    default_code = "invalid_passkey"
    default_detail = "The passkey response could not be verified."


class ChallengeMissing(Problem):
    default_code = "challenge_expired"
    default_detail = "Start again: the passkey challenge is missing, used or expired."


def relying_party() -> tuple[str, str]:
    """(RP ID, origin) from BASE_URL."""
    parts = urlsplit(settings.BASE_URL)
    return parts.hostname or "localhost", f"{parts.scheme}://{parts.netloc}"


def _b64_bytes(value: Any, field: str) -> bytes:
    """Standard base64 or base64url, padded or not (the spec says "base64 string")."""
    if not isinstance(value, str) or not value:
        raise PasskeyInvalid(f"{field} must be a base64 string.", field=field)
    text = value.strip().replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise PasskeyInvalid(f"{field} is not valid base64.", field=field) from None


def _credential_normalize(credential: dict[str, Any], *, kind: str) -> tuple[dict[str, Any], bytes]:
    """The spec's AuthenticatorAttestationRawResponse / AuthenticatorAssertionRawResponse as
    py_webauthn reads it (base64url everywhere, WebAuthn's transport names). Returns it and
    the raw credential id."""
    raw_id = _b64_bytes(credential.get("rawId"), "credential.rawId")
    if _b64_bytes(credential.get("id"), "credential.id") != raw_id:
        raise PasskeyInvalid("credential.id and credential.rawId differ.", field="credential.id")
    response = credential.get("response") or {}
    fields = (
        ("attestationObject", "clientDataJSON")
        if kind == "registration"
        else (
            "authenticatorData",
            "clientDataJSON",
            "signature",
        )
    )
    normalized: dict[str, Any] = {}
    for name in fields:
        normalized[name] = bytes_to_base64url(_b64_bytes(response.get(name), f"credential.response.{name}"))
    if kind == "registration":
        normalized["transports"] = [
            _TRANSPORTS[t.lower()] for t in response.get("transports") or [] if t.lower() in _TRANSPORTS
        ]
    elif response.get("userHandle"):
        normalized["userHandle"] = bytes_to_base64url(
            _b64_bytes(response["userHandle"], "credential.response.userHandle")
        )
    return (
        {
            "id": bytes_to_base64url(raw_id),
            "rawId": bytes_to_base64url(raw_id),
            "type": "public-key",
            "response": normalized,
            "clientExtensionResults": credential.get("clientExtensionResults") or {},
        },
        raw_id,
    )


def _challenge_store(request, *, purpose: str, challenge: bytes, **data: Any) -> None:
    request.session[CHALLENGE] = {
        "purpose": purpose,
        "challenge": bytes_to_base64url(challenge),
        "expires": time.time() + settings.WEBAUTHN_CHALLENGE_SECONDS,
        **data,
    }


def _challenge_take(request, *, purpose: str) -> dict[str, Any]:
    """Single use: removed from the session whatever the outcome, and claimed in the database
    before the answer is checked. Requests that race with the same session each read their
    own copy of it; the claim lets one of them through."""
    state = request.session.get(CHALLENGE)
    if not state or state.get("purpose") != purpose or state.get("expires", 0) < time.time():
        request.session.pop(CHALLENGE, None)
        raise ChallengeMissing()
    challenge = _b64_bytes(state["challenge"], "challenge")
    # A request that loses the claim leaves the session alone: the winner may have replaced it.
    _challenge_claim(challenge, expires=state["expires"])
    request.session.pop(CHALLENGE)
    return {**state, "challenge_bytes": challenge}


def _challenge_claim(challenge: bytes, *, expires: float) -> None:
    now = timezone.now()
    try:
        with transaction.atomic():  # committed at once: a racing insert waits for it, then fails
            UsedPasskeyChallenge.objects.create(
                challenge_hash=hashlib.sha256(challenge).hexdigest(),
                expires_at=datetime.fromtimestamp(expires, tz=UTC),
            )
    except IntegrityError:
        raise ChallengeMissing() from None
    # Past its expiry a challenge is refused by the session check: the claim can go.
    UsedPasskeyChallenge.objects.filter(expires_at__lt=now).delete()


def _creation_options(request, *, user_handle: uuid.UUID, email: str, existing: list[Passkey]) -> dict[str, Any]:
    rp_id, _ = relying_party()
    options = generate_registration_options(
        rp_id=rp_id,
        rp_name=settings.WEBAUTHN_RP_NAME,
        user_id=user_handle.bytes,
        user_name=email,
        user_display_name=email,
        timeout=settings.WEBAUTHN_CHALLENGE_SECONDS * 1000,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            user_verification=UserVerificationRequirement.REQUIRED,
        ),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=_b64_bytes(p.credential_id, "credential_id")) for p in existing
        ],
    )
    _challenge_store(request, purpose="register", challenge=options.challenge, userHandle=str(user_handle), email=email)
    return json.loads(options_to_json(options))


# --- Registration ---------------------------------------------------------------------------


def passkey_register_begin(
    request, *, user: User | None, email: str | None, code: str | None, client: Client
) -> tuple[Step, dict[str, Any] | None]:
    """Signed in: creation options for another passkey. Not signed in: first `email` (a code
    is emailed), then `email` + `code` (options for a new account)."""
    if user is not None:
        step_up_require(request)  # a new passkey is a new way in (accounts.stepup)
        options = _creation_options(
            request, user_handle=user.public_id, email=user.email, existing=list(user.passkeys.all())
        )
        return Step("options"), options
    if not email:
        raise Problem("Give the email address of the new account.", code="required", field="email")
    email = email_normalize(email)
    if not code:
        registration_code_send(request, email=email, flow="passkey_register", client=client)
        return Step("emailCodeSent"), None
    pending = sessions.pending_get(request, flow="passkey_register") or {}
    attempt_count(action="code", email=email, ip=client.ip)
    if pending.get("email") != email:
        pending = {}
    row = email_code_redeem(code_id=pending.get("codeId"), code=code, purpose=CodePurpose.REGISTER)
    sessions.pending_clear(request)
    options = _creation_options(request, user_handle=uuid.uuid4(), email=row.email, existing=[])
    request.session[CHALLENGE]["newAccount"] = True
    request.session.modified = True
    return Step("options"), options


def passkey_register_complete(
    request, *, user: User | None, credential: dict[str, Any], name: str, client: Client
) -> Step:
    state = _challenge_take(request, purpose="register")
    new_account = bool(state.get("newAccount"))
    if not new_account and (user is None or str(user.public_id) != state.get("userHandle")):
        raise ChallengeMissing()
    if not new_account:
        step_up_require(request)  # checked at begin too: the proof may have run out since
    normalized, raw_id = _credential_normalize(credential, kind="registration")
    rp_id, origin = relying_party()
    try:
        verified = verify_registration_response(
            credential=normalized,
            expected_challenge=state["challenge_bytes"],
            expected_rp_id=rp_id,
            expected_origin=origin,
            require_user_verification=True,
        )
    except (InvalidRegistrationResponse, WebAuthnException, ValueError, KeyError) as exc:
        raise PasskeyInvalid(f"The passkey response could not be verified: {exc}", field="credential") from None
    with transaction.atomic():
        if new_account:
            user = account_create(email=state["email"], public_id=uuid.UUID(state["userHandle"]))
        assert user is not None  # an existing account was checked against the challenge above
        try:
            with transaction.atomic():
                passkey = Passkey.objects.create(
                    user=user,
                    name=(name or "Passkey")[:100],
                    credential_id=bytes_to_base64url(verified.credential_id),
                    public_key=verified.credential_public_key,
                    sign_count=verified.sign_count,
                    transports=normalized["response"].get("transports", []),
                    backed_up=bool(verified.credential_backed_up),
                )
        except IntegrityError:
            raise Conflict("This passkey is already registered.", code="passkey_exists") from None
        if not new_account:
            audit.record(
                organization=user,
                action="second_factor.passkey_added",
                person=user,
                ip=client.ip,
                changes={"passkey": str(passkey.id), "name": passkey.name},
            )
            undo = (UNDO_PASSKEY, str(passkey.id))
            change_notice(user=user, notice="passkey_added", client=client, undo=undo, name=passkey.name)
    if new_account:
        token = sessions.session_sign_in(
            request, user=user, method="passkey", client=client, first=True, second_factor="passkey"
        )
        return Step("signedIn", user=user, device_token=token)
    return Step("passkeyAdded", user=user)


# --- Sign-in --------------------------------------------------------------------------------


def passkey_login_begin(request) -> dict[str, Any]:
    rp_id, _ = relying_party()
    options = generate_authentication_options(
        rp_id=rp_id,
        timeout=settings.WEBAUTHN_CHALLENGE_SECONDS * 1000,
        user_verification=UserVerificationRequirement.REQUIRED,
        allow_credentials=[],  # discoverable credentials: the authenticator offers its own
    )
    _challenge_store(request, purpose="login", challenge=options.challenge)
    return json.loads(options_to_json(options))


def passkey_login_complete(request, *, credential: dict[str, Any], client: Client) -> Step:
    attempt_count(action="login", email=None, ip=client.ip)
    state = _challenge_take(request, purpose="login")
    passkey = _assertion_verify(state, credential=credential, client=client)
    if passkey.user.locked_at is not None:
        raise InvalidCredentials("The account is locked: reset its password to sign in again.")
    token = sessions.session_sign_in(
        request, user=passkey.user, method="passkey", client=client, second_factor="passkey"
    )
    return Step("signedIn", user=passkey.user, device_token=token)


def passkey_step_up_begin(request, *, user: User) -> dict[str, Any]:
    """Step-up with a passkey, begin: request options for the account's own passkeys."""
    rp_id, _ = relying_party()
    options = generate_authentication_options(
        rp_id=rp_id,
        timeout=settings.WEBAUTHN_CHALLENGE_SECONDS * 1000,
        user_verification=UserVerificationRequirement.REQUIRED,
        allow_credentials=[
            PublicKeyCredentialDescriptor(id=_b64_bytes(p.credential_id, "credential_id")) for p in user.passkeys.all()
        ],
    )
    _challenge_store(request, purpose="step_up", challenge=options.challenge, user=str(user.public_id))
    return json.loads(options_to_json(options))


def passkey_step_up_complete(request, *, user: User, credential: dict[str, Any], client: Client) -> None:
    """Step-up with a passkey, complete: a user-verified assertion by one of the account's
    passkeys (the sign-in's checks and attempt limits), recorded as the session's proof."""
    attempt_count(action="login", email=user.email, ip=client.ip, device=client.device)
    state = _challenge_take(request, purpose="step_up")
    if state.get("user") != str(user.public_id):
        raise ChallengeMissing()
    _assertion_verify(state, credential=credential, client=client, user=user)
    step_up_record(request)


def _assertion_verify(state: dict[str, Any], *, credential: dict[str, Any], client: Client, user: User | None = None):
    """The passkey that signed the challenge (its count and last use updated), or InvalidCredentials."""
    normalized, raw_id = _credential_normalize(credential, kind="authentication")
    rp_id, origin = relying_party()
    with transaction.atomic():
        passkey = (
            Passkey.objects.select_for_update(of=("self",))
            .select_related("user")
            .filter(credential_id=bytes_to_base64url(raw_id))
            .first()
        )
        if passkey is None or active_user_by_public_id(str(passkey.user.public_id)) is None:
            raise InvalidCredentials("This passkey is not registered here.")
        if user is not None and passkey.user_id != user.pk:
            raise InvalidCredentials("This passkey belongs to another account.")
        handle = normalized["response"].get("userHandle")
        if handle and handle != bytes_to_base64url(passkey.user.public_id.bytes):
            raise InvalidCredentials("This passkey belongs to another account.")
        try:
            verified = verify_authentication_response(
                credential=normalized,
                expected_challenge=state["challenge_bytes"],
                expected_rp_id=rp_id,
                expected_origin=origin,
                credential_public_key=bytes(passkey.public_key),
                credential_current_sign_count=passkey.sign_count,
                require_user_verification=True,
            )
        except (InvalidAuthenticationResponse, WebAuthnException, ValueError, KeyError) as exc:
            if "sign count" in str(exc).lower():
                logger.warning(
                    "Passkey sign count did not grow (a cloned authenticator?): account=%s passkey=%s ip=%s",
                    passkey.user.public_id,
                    passkey.id,
                    client.ip,
                )
            raise InvalidCredentials(f"The passkey could not be verified: {exc}") from None
        passkey.sign_count, passkey.last_used_at = verified.new_sign_count, timezone.now()
        passkey.save(update_fields=["sign_count", "last_used_at"])
    return passkey


# --- Managing passkeys --------------------------------------------------------------------


def passkey_rename(*, user: User, passkey_id, name: str) -> Passkey:
    passkey = Passkey.objects.filter(user=user, id=passkey_id).first()
    if passkey is None:
        raise NotFound("No such passkey.")
    passkey.name = name[:100]
    passkey.save(update_fields=["name"])
    return passkey


def passkey_delete(request, *, user: User, passkey_id, client: Client) -> None:
    """Not the last way in: an account without a password keeps at least one passkey. The
    last passkey goes only with step-up (accounts.stepup), and the owner is emailed."""
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        passkey = Passkey.objects.filter(user=user, id=passkey_id).first()
        if passkey is None:
            raise NotFound("No such passkey.")
        remaining = user.passkeys.count()
        if not user.has_usable_password() and remaining <= 1:
            raise Conflict(
                "This is the account's last way to sign in; set a password or add another passkey first.",
                code="last_factor",
            )
        if remaining <= 1:
            step_up_require(request)
            change_notice(user=user, notice="last_passkey_removed", client=client, name=passkey.name)
        audit.record(
            organization=user,
            action="second_factor.passkey_removed",
            person=user,
            ip=client.ip,
            changes={"passkey": str(passkey.id), "name": passkey.name},
        )
        passkey.delete()

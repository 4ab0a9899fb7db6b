from __future__ import annotations

from django.utils import timezone
from rest_framework import serializers

from accounts.scopes import ALL_SCOPES
from core.api.serializers import PlainTextField, StrictBooleanField, StrictSerializer


class CreateApiKeyRequestSerializer(StrictSerializer):
    name = PlainTextField(max_length=100, allow_null=True, allow_blank=True, required=False)
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=ALL_SCOPES), allow_null=True, required=False, allow_empty=False
    )
    expiresAt = serializers.DateTimeField(allow_null=True, required=False)
    testMode = StrictBooleanField(
        required=False,
        default=False,
        help_text="A test key (pdk_test_...): it sees and makes only test objects, on test networks.",
    )

    def validate_expiresAt(self, value):
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("expiresAt must be in the future.", code="in_the_past")
        return value

    def validate_scopes(self, value):
        if value is None:
            raise serializers.ValidationError("Name at least one scope.", code="required")
        return value

    def validate(self, attrs):
        if not attrs.get("scopes"):
            raise serializers.ValidationError(
                {"scopes": [serializers.ErrorDetail("Name at least one scope.", "required")]}
            )
        return attrs


class ApiKeySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    prefix = serializers.CharField()
    scopes = serializers.ListField(child=serializers.CharField())
    expiresAt = serializers.DateTimeField(source="expires_at", allow_null=True)
    lastUsedAt = serializers.DateTimeField(source="last_used_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    livemode = serializers.BooleanField(help_text="False for a test key (pdk_test_...).")


class ApiKeyCreatedSerializer(ApiKeySerializer):
    key = serializers.CharField(help_text="The API key itself. Shown only in this response.")


# --- Human accounts: request bodies the spec names and leaves open -------------------------

PASSWORD_HELP = "At least 10 characters, not a common or mostly numeric password, not like the email address."


class PasswordRegisterRequestSerializer(StrictSerializer):
    """Starts a password registration: a code ("7KQ2M-X9FHD") is emailed to the address."""

    email = serializers.EmailField(max_length=254)
    password = serializers.CharField(max_length=1024, trim_whitespace=False, help_text=PASSWORD_HELP)


class EmailCodeCompleteRequestSerializer(StrictSerializer):
    """Completes a step that sent a code: the emailed code (ten characters, any case, spaces
    and hyphens ignored), or, for a password sign-in with an authenticator app, its 6-digit
    code or a recovery code. The step in progress is bound to the session cookie the first
    step set."""

    code = serializers.CharField(max_length=64)


class PasswordLoginRequestSerializer(StrictSerializer):
    email = serializers.EmailField(max_length=254)
    password = serializers.CharField(max_length=1024, trim_whitespace=False)


class PasswordForgotRequestSerializer(StrictSerializer):
    email = serializers.EmailField(max_length=254)


class PasswordForgotCompleteRequestSerializer(StrictSerializer):
    email = serializers.EmailField(max_length=254)
    code = serializers.CharField(max_length=64, help_text="The code from the email (ten characters, any case)")
    newPassword = serializers.CharField(max_length=1024, trim_whitespace=False, help_text=PASSWORD_HELP)


class PasswordChangeRequestSerializer(StrictSerializer):
    currentPassword = serializers.CharField(
        max_length=1024,
        trim_whitespace=False,
        allow_blank=True,
        help_text="Empty only for an account that has no password yet (passkey only)",
    )
    newPassword = serializers.CharField(max_length=1024, trim_whitespace=False, help_text=PASSWORD_HELP)


class TotpCodeRequestSerializer(StrictSerializer):
    code = serializers.CharField(
        max_length=64, help_text="A 6-digit code from the authenticator app (disable: or a recovery code)"
    )


# --- WebAuthn structures, as the spec shows them (base64 or base64url strings) ---------------


class AttestationResponseSerializer(serializers.Serializer):
    attestationObject = serializers.CharField()
    clientDataJSON = serializers.CharField()
    transports = serializers.ListField(
        child=serializers.CharField(max_length=20),
        required=False,
        help_text="AuthenticatorTransport: Usb, Nfc, Ble, SmartCard, Hybrid, Internal (or WebAuthn's names)",
    )


class AssertionResponseSerializer(serializers.Serializer):
    authenticatorData = serializers.CharField()
    signature = serializers.CharField()
    clientDataJSON = serializers.CharField()
    userHandle = serializers.CharField(required=False, allow_null=True, allow_blank=True)


class AuthenticatorAttestationRawResponseSerializer(serializers.Serializer):
    id = serializers.CharField(min_length=1)
    rawId = serializers.CharField()
    type = serializers.CharField(help_text="public-key")
    response = AttestationResponseSerializer()
    clientExtensionResults = serializers.DictField(required=False, default=dict)
    extensions = serializers.DictField(required=False, allow_null=True)
    authenticatorAttachment = serializers.CharField(required=False, allow_null=True)


class AuthenticatorAssertionRawResponseSerializer(serializers.Serializer):
    id = serializers.CharField(min_length=1)
    rawId = serializers.CharField()
    type = serializers.CharField(help_text="public-key")
    response = AssertionResponseSerializer()
    clientExtensionResults = serializers.DictField(required=False, default=dict)
    extensions = serializers.DictField(required=False, allow_null=True)
    authenticatorAttachment = serializers.CharField(required=False, allow_null=True)


class RegisterBeginRequestSerializer(StrictSerializer):
    """Signed in: send nothing (or {}) to add a passkey. New account: first `email` (a code is
    emailed), then `email` and `code` to get the creation options."""

    email = serializers.EmailField(max_length=254, required=False)
    code = serializers.CharField(max_length=64, required=False)


class RegisterCompleteRequestSerializer(StrictSerializer):
    credential = AuthenticatorAttestationRawResponseSerializer(help_text="What navigator.credentials.create() returned")
    name = serializers.CharField(max_length=100, required=False, allow_blank=True, help_text="e.g. 'Laptop'")


class LoginCompleteRequestSerializer(StrictSerializer):
    credential = AuthenticatorAssertionRawResponseSerializer(help_text="What navigator.credentials.get() returned")


class TotpDisableRequestSerializer(StrictSerializer):
    code = serializers.CharField(
        max_length=64,
        required=False,
        help_text="A 6-digit code from the authenticator app or a recovery code: the step-up proof. "
        "May be left out after a step-up (POST /auth/step-up) within the last few minutes",
    )


class StepUpRequestSerializer(StrictSerializer):
    code = serializers.CharField(
        max_length=64, required=False, help_text="A 6-digit code from the authenticator app (or a recovery code)"
    )
    credential = AuthenticatorAssertionRawResponseSerializer(
        required=False,
        help_text="What navigator.credentials.get() returned for the options of POST /auth/step-up/begin",
    )


class PasskeyRenameRequestSerializer(StrictSerializer):
    name = serializers.CharField(max_length=100)


# --- Responses --------------------------------------------------------------------------------


class PasskeySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    createdAt = serializers.DateTimeField(source="created_at")
    lastUsedAt = serializers.DateTimeField(source="last_used_at", allow_null=True)
    backedUp = serializers.BooleanField(source="backed_up")


class AccountSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="The account id")
    email = serializers.EmailField()
    createdAt = serializers.DateTimeField()
    hasPassword = serializers.BooleanField()
    totpEnabled = serializers.BooleanField()
    passkeys = PasskeySerializer(many=True)


AUTH_STATUSES = [
    "steppedUp",
    "emailCodeSent",
    "totpRequired",
    "signedIn",
    "signedOut",
    "passwordReset",
    "passwordChanged",
    "passkeyAdded",
    "options",
    "totpEnabled",
    "totpDisabled",
    "accountDeleted",
]


class AuthStepSerializer(serializers.Serializer):
    """What happened and what the client does next. `account` is there once signed in."""

    status = serializers.ChoiceField(choices=AUTH_STATUSES)
    detail = serializers.CharField()
    account = AccountSerializer(required=False, allow_null=True)


class PublicKeyOptionsSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["options", "emailCodeSent"])
    detail = serializers.CharField()
    publicKey = serializers.DictField(
        allow_null=True,
        help_text="PublicKeyCredentialCreationOptions / RequestOptions for navigator.credentials "
        "(binary members as base64url strings)",
    )


class TotpSetupSerializer(serializers.Serializer):
    otpauthUri = serializers.CharField(help_text="otpauth://totp/... for an authenticator app")
    secret = serializers.CharField(help_text="The same secret in base32, to type in by hand")
    qrSvg = serializers.CharField(help_text="The otpauth URI as an SVG QR code")


class TotpEnabledSerializer(serializers.Serializer):
    totpEnabled = serializers.BooleanField()
    recoveryCodes = serializers.ListField(
        child=serializers.CharField(), help_text="Ten single-use codes, shown only in this response"
    )


class TotpDisabledSerializer(serializers.Serializer):
    totpEnabled = serializers.BooleanField()


class MeSerializer(AccountSerializer):
    authenticatedWith = serializers.ChoiceField(choices=["session", "apiKey"])
    sessionMethod = serializers.ChoiceField(
        choices=["password", "passkey"], allow_null=True, help_text="How this session signed in (null for a key)"
    )
    scopes = serializers.ListField(child=serializers.CharField(), help_text="The scopes this request may use")
    organizationId = serializers.UUIDField(
        help_text="The organization this request works in: a key's own; a session's chosen one (its own account "
        "unless switched). The account fields above are the person signed in (a session) or the organization (a key)"
    )
    role = serializers.ChoiceField(
        choices=["owner", "admin", "developer", "support", "viewer"],
        allow_null=True,
        help_text="A session's role in the organization (null for a key: its scopes decide)",
    )

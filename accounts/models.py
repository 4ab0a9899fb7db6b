from __future__ import annotations

import time
import uuid
from base64 import b32encode
from typing import ClassVar
from urllib.parse import quote, urlencode

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy
from django_otp.models import Device, ThrottlingMixin, TimestampMixin
from django_otp.oath import TOTP
from django_otp.util import random_hex

from core.encryption import EncryptedTextField


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def create_user(self, email: str, password: str | None = None, **extra) -> User:
        if not email:
            raise ValueError("An account needs an email address.")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password)  # None gives an unusable password
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra) -> User:
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra)


class User(AbstractBaseUser, PermissionsMixin):
    """An account: a merchant (or operator) who owns drafts, keys and webhooks."""

    # The id the API shows; the integer primary key never leaves the database.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    email = models.EmailField(unique=True)
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)
    date_joined = models.DateTimeField(default=timezone.now)
    # Set when the owner deleted the account: the row stays (anonymised) for the operator's books.
    deleted_at = models.DateTimeField(null=True, blank=True)
    # Set by the owner's "lock the account" link (accounts.security_links): no sign-in until a
    # password reset clears it.
    locked_at = models.DateTimeField(null=True, blank=True)
    # The receiving-address lock (addressbook.selectors.receiver_lock_active): while on, what API
    # keys and MCP create may pay only addresses of the address book past their delay. Turning it
    # off waits RECEIVER_LOCK_DELAY_HOURS (`receiver_lock_off_at`). On this row because the API
    # key look-up loads it with the key: the check costs no query.
    receiver_lock = models.BooleanField(default=False)
    receiver_lock_off_at = models.DateTimeField(null=True, blank=True)

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    def __str__(self) -> str:
        return self.email

    def save(self, *args, **kwargs) -> None:
        adding = self.pk is None
        super().save(*args, **kwargs)
        if adding:  # every account is an organization whose first owner is its own person
            Membership.objects.get_or_create(organization=self, person=self, defaults={"role": Role.OWNER})


class Role(models.TextChoices):
    """A member's role in an organization (what each may do: accounts/roles.py)."""

    OWNER = "owner", gettext_lazy("Owner")
    ADMIN = "admin", gettext_lazy("Admin")
    DEVELOPER = "developer", gettext_lazy("Developer")
    SUPPORT = "support", gettext_lazy("Support")
    VIEWER = "viewer", gettext_lazy("Viewer")


class Membership(models.Model):
    """A person's place in an organization. The organization is the account that owns the
    objects (drafts, keys, webhooks...); the person signs in as themselves. An account is an
    organization of which its own person is an owner (that membership is never removed)."""

    organization = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    person = models.ForeignKey(User, on_delete=models.CASCADE, related_name="organizations_joined")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "person"], name="membership_unique")]
        indexes = [models.Index(fields=["person", "organization"], name="membership_person")]

    def __str__(self) -> str:
        return f"{self.person_id} in {self.organization_id}: {self.role}"


class Invitation(models.Model):
    """An invitation to join an organization with a role, sent by email: a link valid
    TEAM_INVITATION_DAYS, used once. Only a hash of its token is stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(User, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Role.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"invitation {self.id} ({self.role})"


class ApiKey(models.Model):
    """A scoped Bearer key. Only a SHA-256 hash of the key is stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The organization the key belongs to (it acts as that account).
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_keys")
    # The person who created it: removing them from the organization revokes it (accounts.teams).
    created_by = models.ForeignKey(
        User, on_delete=models.SET_NULL, null=True, blank=True, related_name="api_keys_created"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, db_index=True, help_text="First characters of the key, for recognising it")
    key_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    # A test key (pdk_test_...) sees and makes only test objects, on test networks (accounts.modes).
    livemode = models.BooleanField(default=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name or 'key'} ({self.prefix}…)"

    def is_usable(self, at=None) -> bool:
        at = at or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > at)


class CodePurpose(models.TextChoices):
    REGISTER = "register"
    LOGIN = "login"
    PASSWORD_RESET = "password_reset"


class EmailCode(models.Model):
    """A code sent by email (accounts.codes). Only a keyed hash is stored; single use, a few tries,
    a short life. `payload` carries what completing it needs (a new account's password hash)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    email = models.EmailField(db_index=True)
    user = models.ForeignKey(User, on_delete=models.CASCADE, null=True, blank=True, related_name="email_codes")
    purpose = models.CharField(max_length=16, choices=CodePurpose.choices)
    code_hash = models.CharField(max_length=64)
    payload = models.JSONField(default=dict, blank=True)
    tries = models.PositiveSmallIntegerField(default=0)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.purpose} code for {self.email}"


class Passkey(models.Model):
    """A WebAuthn credential (discoverable, user-verified) registered to an account."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="passkeys")
    name = models.CharField(max_length=100, blank=True)
    credential_id = models.CharField(max_length=1400, unique=True, help_text="base64url of the raw credential id")
    public_key = models.BinaryField()
    sign_count = models.BigIntegerField(default=0)
    transports = models.JSONField(default=list, blank=True)
    backed_up = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"{self.name or 'passkey'} of {self.user}"


class RecoveryCode(models.Model):
    """A single-use code that stands in for a TOTP code. Only its SHA-256 is stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="recovery_codes")
    code_hash = models.CharField(max_length=64)
    used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"recovery code of {self.user} ({'used' if self.used_at else 'unused'})"


class KnownDevice(models.Model):
    """A browser that signed in to an account before (a long-lived random cookie, stored hashed).
    A sign-in from any other device emails the owner."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="known_devices")
    device_hash = models.CharField(max_length=64)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "device_hash"], name="accounts_device_once")]

    def __str__(self) -> str:
        return f"device of {self.user} since {self.first_seen_at:%Y-%m-%d}"


class UsedPasskeyChallenge(models.Model):
    """A WebAuthn challenge that has been answered, by its SHA-256. The primary key makes the
    answer single use across requests: of several racing with the same challenge (one
    assertion sent at once from copies of a session) only the first insert succeeds. Kept
    until the challenge would have expired anyway."""

    challenge_hash = models.CharField(max_length=64, primary_key=True)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"used challenge {self.challenge_hash[:12]}…"


def totp_key_new() -> str:
    return random_hex(20)


class TotpDevice(TimestampMixin, ThrottlingMixin, Device):
    """An authenticator app: django-otp's TOTPDevice, with its key encrypted at rest
    (FIELD_ENCRYPTION_KEY). Codes are checked exactly as django-otp checks them."""

    key = EncryptedTextField(default=totp_key_new)  # hex, 20 random bytes
    step = models.PositiveSmallIntegerField(default=30)
    t0 = models.BigIntegerField(default=0)
    digits = models.PositiveSmallIntegerField(choices=[(6, 6), (8, 8)], default=6)
    tolerance = models.PositiveSmallIntegerField(default=1)
    drift = models.SmallIntegerField(default=0)
    # The time step of the last code accepted: a code must be from a later step (no replay).
    last_t = models.BigIntegerField(default=-1)

    class Meta(Device.Meta):
        verbose_name = "TOTP device"

    @property
    def bin_key(self) -> bytes:
        return bytes.fromhex(self.key)

    def verify_token(self, token) -> bool:
        allowed, _ = self.verify_is_allowed()
        if not allowed:
            return False
        try:
            token = int(token)
        except (TypeError, ValueError):
            verified = False
        else:
            totp = TOTP(self.bin_key, self.step, self.t0, self.digits, self.drift)
            totp.time = time.time()
            verified = totp.verify(token, self.tolerance, self.last_t + 1)
            if verified:
                self.last_t = totp.t()
                if settings.OTP_TOTP_SYNC:
                    self.drift = totp.drift
                self.throttle_reset(commit=False)
                self.set_last_used_timestamp(commit=False)
                self.save()
        if not verified:
            self.throttle_increment(commit=True)
        return verified

    def get_throttle_factor(self) -> int:
        return 1

    @property
    def config_url(self) -> str:
        """The otpauth:// URI an authenticator app reads (Key Uri Format), issuer OTP_TOTP_ISSUER."""
        label = str(self.user.get_username())
        params = urlencode(
            {"secret": b32encode(self.bin_key), "algorithm": "SHA1", "digits": self.digits, "period": self.step}
        )
        if issuer := settings.OTP_TOTP_ISSUER.replace(":", ""):
            label = f"{issuer}:{label}"
            params += f"&issuer={quote(issuer)}"  # RFC 3986 quoting, as django-otp does
        return f"otpauth://totp/{quote(label)}?{params}"


class MerchantProfile(models.Model):
    """What payers see of an account (name, logo, support contact) and how the account reads
    amounts and times (display currency, IANA time zone, language). Written only through
    `accounts.profiles.merchant_profile_update`; an account without a row reads the defaults."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, related_name="merchant_profile", primary_key=True)
    display_name = models.CharField(max_length=80, blank=True)
    # The logo as we re-encoded it (PNG, no metadata); served at /merchant-logos/<digest>.png.
    logo_png = models.BinaryField(null=True, blank=True)
    logo_digest = models.CharField(max_length=32, blank=True, db_index=True)
    support_email = models.EmailField(blank=True)
    support_url = models.URLField(max_length=300, blank=True)
    display_currency = models.CharField(max_length=3, default="USD")
    time_zone = models.CharField(max_length=64, default="UTC")
    language = models.CharField(max_length=16, default="en")
    # The most a support member may approve in one refund, in USD (set by an owner; None: none).
    support_refund_limit_usd = models.DecimalField(max_digits=18, decimal_places=2, null=True, blank=True)
    # Every member working in the organization must have a second factor (set by an owner).
    require_second_factor = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"profile of {self.user_id}"

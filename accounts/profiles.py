"""The merchant profile: who a payer is paying (display name, logo, support contact) and how
the account reads amounts and times (display currency, time zone, language).

One door writes it (`merchant_profile_update`), shared by the REST API and the dashboard.
A logo is never stored as uploaded: Pillow decodes it within byte and pixel caps, and the
pixels are written out again as a PNG of at most LOGO_MAX_SIDE pixels a side, so no
metadata, script or second format rides along. SVG is refused (a raster is enough for a
logo and needs no sanitizer).
"""

from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, available_timezones

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email
from django.db import transaction
from django.urls import reverse
from django.utils.translation import gettext as _
from PIL import Image, UnidentifiedImageError

from accounts.authorization import SessionRequired
from accounts.models import MerchantProfile
from accounts.modes import by_key
from audit import services as audit
from core.problems import Problem
from core.text import CODE as CONTROL_CODE
from core.text import MESSAGE as CONTROL_MESSAGE
from core.text import has_control_characters
from payments.rates.fiat import FIAT_CURRENCIES

LOGO_MAX_BYTES = 256 * 1024  # the API caps every request body at API_MAX_BODY_BYTES (256 KB by default)
LOGO_MAX_PIXELS = 4096 * 4096  # the decoded image, checked from the header before decoding
LOGO_MAX_SIDE = 256  # the stored logo's longest side
LOGO_FORMATS = ("PNG", "JPEG", "WEBP", "GIF")
DISPLAY_NAME_MAX = 80
DEFAULTS = {"display_currency": "USD", "time_zone": "UTC", "language": "en"}


@dataclass(frozen=True)
class Profile:
    """An account's profile as read (the defaults for an account that never set one)."""

    display_name: str = ""
    logo_digest: str = ""
    support_email: str = ""
    support_url: str = ""
    display_currency: str = DEFAULTS["display_currency"]
    time_zone: str = DEFAULTS["time_zone"]
    language: str = DEFAULTS["language"]

    @property
    def logo_url(self) -> str | None:
        if not self.logo_digest:
            return None
        return reverse("merchant-logo", kwargs={"digest": self.logo_digest})

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)


def _profile_of(row: MerchantProfile | None) -> Profile:
    if row is None:
        return Profile()
    return Profile(
        display_name=row.display_name,
        logo_digest=row.logo_digest,
        support_email=row.support_email,
        support_url=row.support_url,
        display_currency=row.display_currency,
        time_zone=row.time_zone,
        language=row.language,
    )


def merchant_profile_get(*, user) -> Profile:
    if user is None or user.pk is None:
        return Profile()
    return _profile_of(MerchantProfile.objects.filter(user_id=user.pk).defer("logo_png").first())


def merchant_logo_png(*, digest: str) -> bytes | None:
    row = MerchantProfile.objects.filter(logo_digest=digest).exclude(logo_png=None).only("logo_png").first()
    return bytes(row.logo_png) if row is not None and row.logo_png is not None else None


# --- Checks -------------------------------------------------------------------------------


def _text(value: Any, field: str, max_length: int) -> str:
    if not isinstance(value, str):
        raise Problem(f"{field} must be a string.", code="invalid", field=field)
    if has_control_characters(value):  # before the strip, which would drop some unnoticed
        raise Problem(f"{field}: {CONTROL_MESSAGE}", code=CONTROL_CODE, field=field)
    value = value.strip()
    if len(value) > max_length:
        raise Problem(f"{field} is at most {max_length} characters.", code="max_length", field=field)
    return value


def https_url_check(value: str, *, field: str) -> str:
    """An absolute https:// URL a payer's browser opens (support page, return to the shop); empty
    stays empty."""
    value = _text(value, field, 300)
    if not value:
        return ""
    try:
        URLValidator(schemes=["https"])(value)
    except ValidationError:
        raise Problem(
            _("%(field)s must be an absolute https:// URL.") % {"field": field}, code="invalid_url", field=field
        ) from None
    if urlsplit(value).username is not None or urlsplit(value).password is not None:
        raise Problem(
            _("%(field)s must not carry a user name or password.") % {"field": field}, code="invalid_url", field=field
        )
    return value


def _email(value: Any, field: str) -> str:
    value = _text(value, field, 254)
    if value:
        try:
            validate_email(value)
        except ValidationError:
            raise Problem(
                _("%(field)s is not a valid email address.") % {"field": field}, code="invalid_email", field=field
            ) from None
    return value


def _currency(value: Any, field: str) -> str:
    value = _text(value, field, 3).upper()
    if value not in FIAT_CURRENCIES:
        raise Problem(f"{field} must be an ISO 4217 currency code such as EUR.", code="invalid_choice", field=field)
    return value


_ZONES: set[str] | None = None


def _time_zone(value: Any, field: str) -> str:
    global _ZONES
    value = _text(value, field, 64)
    if _ZONES is None:
        _ZONES = available_timezones()
    if value not in _ZONES:
        raise Problem(
            f"{field} must be an IANA time zone name such as Europe/Berlin.", code="invalid_choice", field=field
        )
    return value


def language_codes() -> list[str]:
    return [code for code, _name in settings.LANGUAGES]


def _language(value: Any, field: str) -> str:
    value = _text(value, field, 16)
    codes = {code.lower(): code for code in language_codes()}
    if value.lower() not in codes:
        raise Problem(
            f"{field} must be one of: {', '.join(sorted(codes.values()))}.", code="invalid_choice", field=field
        )
    return codes[value.lower()]


def logo_encode(data: bytes, *, field: str = "logo") -> bytes:
    """The uploaded image re-encoded as a small PNG; a Problem naming `field` otherwise."""
    if len(data) > LOGO_MAX_BYTES:
        raise Problem(f"The logo is at most {LOGO_MAX_BYTES // 1024} KB.", code="too_large", field=field)
    if data.lstrip()[:5].lower() in (b"<?xml", b"<svg ") or b"<svg" in data[:512].lower():
        raise Problem(
            "Upload the logo as PNG, JPEG, WebP or GIF; SVG is not accepted.", code="invalid_image", field=field
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image: Image.Image = Image.open(io.BytesIO(data), formats=LOGO_FORMATS)
            width, height = image.size
            if width * height > LOGO_MAX_PIXELS or not width or not height:
                raise Problem(
                    f"The logo has too many pixels: at most {LOGO_MAX_PIXELS} are taken ({width}×{height} given).",
                    code="too_large",
                    field=field,
                )
            image.seek(0)  # the first frame of an animation
            image.load()
    except Problem:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        # Pillow's own cap (MAX_IMAGE_PIXELS), met while opening a header that declares far more
        # pixels than ours allows: the file is an image, only too large a one.
        raise Problem(
            f"The logo has too many pixels: at most {LOGO_MAX_PIXELS} are taken.", code="too_large", field=field
        ) from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Warning):
        raise Problem("The logo is not a PNG, JPEG, WebP or GIF image.", code="invalid_image", field=field) from None
    image = image.convert("RGBA")
    image.thumbnail((LOGO_MAX_SIDE, LOGO_MAX_SIDE))
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


# --- The door -----------------------------------------------------------------------------


def _limit(value: Any, field: str) -> Decimal | None:
    """A USD amount, 0 to 10^15, two decimals at most (None: no limit set: support approves none)."""
    if value is None:
        return None
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise Problem('A USD amount such as "250.00".', code="invalid", field=field) from None
    if not amount.is_finite() or amount < 0 or amount >= 10**15 or amount != amount.quantize(Decimal("0.01")):
        raise Problem("A USD amount from 0, with two decimals at most.", code="invalid", field=field)
    return amount


_CHECKS = {
    "display_name": lambda v, f: _text(v, f, DISPLAY_NAME_MAX),
    # Set by an owner only (PUT /api/v1/team/refund-limit); not a field of the profile API.
    "support_refund_limit_usd": _limit,
    "support_email": _email,
    "support_url": lambda v, f: https_url_check(v, field=f),
    "display_currency": _currency,
    "time_zone": _time_zone,
    "language": _language,
}
# The API's names of the fields, so a Problem names the field the caller sent.
API_NAMES = {
    "display_name": "displayName",
    "support_email": "supportEmail",
    "support_url": "supportUrl",
    "display_currency": "displayCurrency",
    "time_zone": "timeZone",
    "language": "language",
}

_UNSET = object()


# Where payers are sent for help: a stolen key must not be able to point them elsewhere
# (docs/security.md, "Key vs person"), so only a person changes it.
PERSON_ONLY = ("support_email", "support_url")


def merchant_profile_update(
    *,
    user,
    changes: dict[str, Any],
    logo: bytes | None | object = _UNSET,
    names: dict[str, str] | None = None,
) -> Profile:
    """Change some fields (model names in `changes`); `logo` bytes replace the logo, None removes
    it. Every field is checked before anything is written: a Problem leaves the profile as it was.
    `names` maps model names to the caller's field names for the Problem (the API's by default)."""
    names = names or API_NAMES
    unknown = set(changes) - set(_CHECKS)
    if unknown:
        raise Problem(f"Unknown profile field: {sorted(unknown)[0]}.", code="unknown_field", field=sorted(unknown)[0])
    for key in PERSON_ONLY:
        if key in changes and by_key(user):
            raise SessionRequired(
                "The support contact payers are sent to changes only from a signed-in session, never an API key.",
                field=names.get(key, key),
            )
    checked = {key: _CHECKS[key](value, names.get(key, key)) for key, value in changes.items()}
    png = logo_encode(logo, field=names.get("logo", "logo")) if isinstance(logo, bytes) else None
    with transaction.atomic():
        row, _created = MerchantProfile.objects.select_for_update().get_or_create(user_id=user.pk, defaults=DEFAULTS)
        for key, value in checked.items():
            setattr(row, key, value)
        if logo is not _UNSET:
            row.logo_png = png
            row.logo_digest = hashlib.sha256(png).hexdigest()[:32] if png else ""
        row.save()
        shown = {key: value for key, value in checked.items()}
        if logo is not _UNSET:
            shown["logo"] = row.logo_digest or None
        audit.record(organization=user, action="settings.profile_changed", changes=shown)
    return _profile_of(row)


def merchant_profile_json(profile: Profile, *, base_url: str) -> dict[str, Any]:
    """MerchantProfileResponse (docs/decisions.md)."""
    return {
        "displayName": profile.display_name,
        "logoUrl": f"{base_url}{profile.logo_url}" if profile.logo_url else None,
        "supportEmail": profile.support_email or None,
        "supportUrl": profile.support_url or None,
        "displayCurrency": profile.display_currency,
        "timeZone": profile.time_zone,
        "language": profile.language,
    }


def support_refund_limit(organization_id) -> Decimal | None:
    """The support role's refund approval limit in USD (None: none set; refunds.limits)."""
    return (
        MerchantProfile.objects.filter(user_id=organization_id)
        .values_list("support_refund_limit_usd", flat=True)
        .first()
    )

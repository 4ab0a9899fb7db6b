"""The merchant profile over the API: who payers see as the payee, and the account's display
currency, time zone and language; the logo re-encoded and served from a public URL."""

from __future__ import annotations

import io
import struct
import zlib
from base64 import b64encode
from urllib.parse import urlsplit

import pytest
from PIL import Image

from accounts.models import MerchantProfile

pytestmark = pytest.mark.django_db

URL = "/api/v1/account/profile"


def png(width: int = 40, height: int = 20, *, fmt: str = "PNG", **save) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format=fmt, **save)
    return out.getvalue()


def test_an_account_without_a_profile_reads_the_defaults(api_client):
    body = api_client.get(URL).json()
    assert body == {
        "displayName": "",
        "logoUrl": None,
        "supportEmail": None,
        "supportUrl": None,
        "displayCurrency": "USD",
        "timeZone": "UTC",
        "language": "en",
    }


@pytest.fixture
def signed_in(session_client):
    """The owner's browser session (the support contact changes only from one), CSRF token set."""
    session_client.get("/admin/login/")  # the csrftoken cookie, as any page sets it
    session_client.credentials(HTTP_X_CSRFTOKEN=session_client.cookies["csrftoken"].value)
    return session_client


def test_the_owner_sets_name_contact_currency_zone_and_language(signed_in):
    api_client = signed_in
    response = api_client.patch(
        URL,
        {
            "displayName": "Corner Coffee",
            "supportEmail": "help@corner.example",
            "supportUrl": "https://corner.example/help",
            "displayCurrency": "eur",
            "timeZone": "Europe/Berlin",
            "language": "de",
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json()["displayName"] == "Corner Coffee"
    assert response.json()["displayCurrency"] == "EUR"
    again = api_client.get(URL).json()
    assert again["supportUrl"] == "https://corner.example/help" and again["timeZone"] == "Europe/Berlin"

    # Only the fields sent change; null clears an optional one.
    api_client.patch(URL, {"supportEmail": None}, format="json")
    again = api_client.get(URL).json()
    assert again["supportEmail"] is None and again["displayName"] == "Corner Coffee"


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("supportUrl", "http://corner.example/help", "invalid_url"),
        ("supportUrl", "javascript:alert(1)", "invalid_url"),
        ("supportUrl", "https://user:pw@corner.example/", "invalid_url"),
        ("supportEmail", "not an email", "invalid_email"),
        ("timeZone", "Mars/Olympus", "invalid_choice"),
        ("displayCurrency", "XYZ", "invalid_choice"),
        ("language", "tlh", "invalid_choice"),
        ("displayName", "Evil\u202eeepahC", "control_characters"),
        ("displayName", "Corner\u200bCoffee", "control_characters"),
        ("displayName", "\ufeffCorner Coffee", "control_characters"),
        ("displayName", "Corner\u2066Coffee\u2069", "control_characters"),
        ("displayName", "Corner Coffee\u001f", "control_characters"),
        ("supportEmail", "help\u200d@corner.example", "control_characters"),
        ("supportUrl", "https://corner.example/\u200fhelp", "control_characters"),
        ("displayName", "x" * 81, "max_length"),
    ],
)
def test_a_bad_value_is_a_problem_naming_the_field_and_nothing_is_written(signed_in, field, value, code):
    response = signed_in.patch(URL, {"displayName": "Kept", field: value}, format="json")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["errors"][0]["field"] == field and problem["errors"][0]["code"] == code
    assert not MerchantProfile.objects.exists()


def test_a_key_cannot_change_where_payers_are_sent_for_help(api_client):
    for field, value in (("supportEmail", "help@elsewhere.example"), ("supportUrl", "https://elsewhere.example/")):
        refused = api_client.patch(URL, {"displayName": "Kept", field: value}, format="json")
        assert refused.status_code == 403 and refused.json()["code"] == "session_required"
        assert refused.json()["errors"][0]["field"] == field
    assert api_client.patch(URL, {"displayName": "Corner Coffee"}, format="json").status_code == 200
    assert api_client.get(URL).json()["supportEmail"] is None


def test_changing_the_profile_needs_paylinks_write_reading_it_any_key(client_with_scopes, anon_client):
    reader = client_with_scopes("drafts:read")
    assert reader.get(URL).status_code == 200
    assert reader.patch(URL, {"displayName": "X"}, format="json").status_code == 403
    assert anon_client.get(URL).status_code == 401


def test_a_logo_is_re_encoded_as_a_small_png_and_served_with_safe_headers(api_client, anon_client):
    jpeg = png(1000, 500, fmt="JPEG", exif=b"Exif\x00\x00secret-camera-serial")
    response = api_client.put(f"{URL}/logo", {"imageBase64": b64encode(jpeg).decode()}, format="json")
    assert response.status_code == 200, response.json()
    logo_url = response.json()["logoUrl"]
    assert logo_url.endswith(".png")

    served = anon_client.get(urlsplit(logo_url).path)
    assert served.status_code == 200
    assert served["Content-Type"] == "image/png"
    assert served["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in served["Content-Security-Policy"]
    image = Image.open(io.BytesIO(served.content))
    assert image.format == "PNG" and max(image.size) == 256 and image.size == (256, 128)
    assert b"secret-camera-serial" not in served.content

    assert api_client.delete(f"{URL}/logo").json()["logoUrl"] is None
    assert anon_client.get(urlsplit(logo_url).path).status_code == 404


@pytest.mark.parametrize(
    ("body", "content_type", "code", "status"),
    [
        (
            b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
            "image/svg+xml",
            "invalid_image",
            400,
        ),
        (b"GIF89a this is not an image", "image/gif", "invalid_image", 400),
        (b"\x89PNG" + b"\x00" * (300 * 1024), "image/png", "payload_too_large", 413),
    ],
)
def test_a_logo_that_is_not_a_small_raster_image_is_refused(api_client, body, content_type, code, status):
    response = api_client.put(f"{URL}/logo", {"imageBase64": b64encode(body).decode()}, format="json")
    assert response.status_code == status
    assert response.json()["code"] == code
    assert api_client.get(URL).json()["logoUrl"] is None


def test_a_logo_with_too_many_pixels_is_refused_before_decoding(api_client):
    big = png(5000, 4000)  # flat colour: small in bytes, 20 MP decoded
    assert len(big) < 180 * 1024
    response = api_client.put(f"{URL}/logo", {"imageBase64": b64encode(big).decode()}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "logo"


def declared_png(width: int, height: int) -> bytes:
    """A tiny PNG whose header declares width × height (a decompression bomb's header)."""
    data = bytearray(png(1, 1))
    ihdr = data.index(b"IHDR")
    data[ihdr + 4 : ihdr + 12] = struct.pack(">II", width, height)
    crc = zlib.crc32(bytes(data[ihdr : ihdr + 17]))
    data[ihdr + 17 : ihdr + 21] = struct.pack(">I", crc)
    return bytes(data)


@pytest.mark.parametrize("side", [10_000, 100_000])  # Pillow's warning (over 89 MP), its error (over 179 MP)
def test_a_decompression_bomb_logo_is_refused_as_too_many_pixels_not_as_no_image(api_client, side):
    bomb = declared_png(side, side)
    assert len(bomb) < 200
    response = api_client.put(f"{URL}/logo", {"imageBase64": b64encode(bomb).decode()}, format="json")
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert (error["field"], error["code"]) == ("logo", "too_large"), error
    assert "too many pixels" in error["message"]
    assert not MerchantProfile.objects.exclude(logo_png=None).exists()

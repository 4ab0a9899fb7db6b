"""The dashboard's Profile page: the merchant sets what payers see and how the account reads
amounts and times, through the same door as the API."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image

from accounts.profiles import merchant_profile_get

pytestmark = pytest.mark.django_db

FORM = {
    "display_name": "Corner Coffee",
    "support_email": "help@corner.example",
    "support_url": "https://corner.example/help",
    "display_currency": "EUR",
    "time_zone": "Europe/Berlin",
    "language": "de",
}


@pytest.fixture
def browser(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def logo_file() -> SimpleUploadedFile:
    out = io.BytesIO()
    Image.new("RGB", (300, 100), (10, 120, 60)).save(out, format="PNG")
    return SimpleUploadedFile("logo.png", out.getvalue(), content_type="image/png")


def test_a_visitor_is_sent_to_sign_in(client, settings):
    response = client.get("/dashboard/profile/")
    assert response.status_code == 302 and response["Location"].startswith(settings.LOGIN_URL)


def test_the_owner_saves_name_contact_zone_and_a_logo(browser, owner):
    page = browser.get("/dashboard/profile/")
    assert page.status_code == 200 and b'name="display_name"' in page.content
    response = browser.post("/dashboard/profile/", {**FORM, "logo": logo_file()})
    assert response.status_code == 302
    profile = merchant_profile_get(user=owner)
    assert profile.display_name == "Corner Coffee" and profile.time_zone == "Europe/Berlin"
    assert profile.language == "de" and profile.display_currency == "EUR"
    assert profile.logo_url and profile.logo_url in browser.get("/dashboard/profile/").content.decode()

    browser.post("/dashboard/profile/", {**FORM, "remove_logo": "on"})
    assert merchant_profile_get(user=owner).logo_url is None


def test_a_plain_http_support_page_is_refused_next_to_its_field(browser, owner):
    response = browser.post("/dashboard/profile/", {**FORM, "support_url": "http://corner.example"})
    assert response.status_code == 400
    assert response.context["form"].errors["support_url"]
    assert merchant_profile_get(user=owner).display_name == ""  # nothing written


def test_a_file_that_is_not_an_image_is_refused_next_to_the_logo(browser, owner):
    bad = SimpleUploadedFile("logo.png", b"<svg onload=alert(1)>", content_type="image/png")
    response = browser.post("/dashboard/profile/", {**FORM, "logo": bad})
    assert response.status_code == 400 and response.context["form"].errors["logo"]
    assert merchant_profile_get(user=owner).logo_url is None

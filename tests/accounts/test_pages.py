"""The account pages: plain forms over the same services as the API."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.accounts.conftest import PASSWORD, emailed_code

pytestmark = pytest.mark.django_db


def test_signing_in_through_the_pages_goes_back_to_the_page_asked_for(registered):
    browser = Client(enforce_csrf_checks=False)
    asked = browser.get("/account/")
    assert asked.status_code == 302 and asked["Location"] == "/account/sign-in?next=/account/"

    step = browser.post(
        "/account/sign-in", {"email": "merchant@example.com", "password": PASSWORD, "next": "/account/"}
    )
    assert step.status_code == 302 and step["Location"].startswith("/account/sign-in/code")
    done = browser.post("/account/sign-in/code", {"code": emailed_code("merchant@example.com"), "next": "/account/"})

    assert done.status_code == 302 and done["Location"] == "/account/"
    page = browser.get("/account/")
    assert b"merchant@example.com" in page.content
    assert "default-src 'none'" in page["Content-Security-Policy"]
    assert b"<script" not in page.content and b"style=" not in page.content


def test_a_wrong_password_is_shown_on_the_form_with_the_same_words_for_any_address(registered):
    known = Client().post("/account/sign-in", {"email": "merchant@example.com", "password": "wrong-wrong-1"})
    unknown = Client().post("/account/sign-in", {"email": "nobody@example.com", "password": "wrong-wrong-1"})

    assert known.status_code == unknown.status_code == 401
    assert b"The email address or password is wrong." in known.content

    def shown(response, email: bytes) -> bytes:
        page = re.sub(rb'name="csrfmiddlewaretoken" value="[^"]+"', b"", response.content)
        return page.replace(email, b"X")

    assert shown(known, b"merchant@example.com") == shown(unknown, b"nobody@example.com")


def test_a_next_address_on_another_site_is_ignored(registered):
    browser = Client()
    browser.post("/account/sign-in", {"email": "merchant@example.com", "password": PASSWORD})

    done = browser.post(
        "/account/sign-in/code", {"code": emailed_code("merchant@example.com"), "next": "https://evil.example/"}
    )

    assert done["Location"] == "/account/"


def test_page_forms_need_the_csrf_token(db):
    response = Client(enforce_csrf_checks=True).post(
        "/account/register", {"email": "a@example.com", "password": PASSWORD}
    )

    assert response.status_code == 403

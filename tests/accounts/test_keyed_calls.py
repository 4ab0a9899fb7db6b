"""A REST call that names an API key passes by the browser-session middleware (session, CSRF,
user, messages); every other request goes through it as before (accounts/middleware.py)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.http import HttpResponse
from django.test import RequestFactory
from rest_framework.test import APIClient

from accounts.middleware import (
    AuthenticationMiddleware,
    CsrfViewMiddleware,
    MessageMiddleware,
    SessionMiddleware,
    keyed_api_call,
)
from addressbook.models import AddressBookEntry
from tests.drafts.conftest import ADDRESSES

URL = "/api/v1/address-book"


def entry_body(label: str) -> dict:
    return {"label": label, "address": ADDRESSES["Ethereum"], "network": "Ethereum", "direction": "Receiving"}


def through_the_session_middleware(request) -> dict[str, bool]:
    """What the request carries when it reaches the view, past the four middlewares in
    settings' order."""
    seen = {}

    def view(request):
        seen.update(
            session=hasattr(request, "session"),
            user=hasattr(request, "user"),
            messages=hasattr(request, "_messages"),
            csrf_cookie_read="CSRF_COOKIE" in request.META,
        )
        return HttpResponse("ok")

    chain = SessionMiddleware(CsrfViewMiddleware(AuthenticationMiddleware(MessageMiddleware(view))))
    assert chain(request).content == b"ok"
    return seen


BROWSER_COOKIES = f"sessionid=abc; csrftoken={'x' * 32}"
NOTHING = {"session": False, "user": False, "messages": False, "csrf_cookie_read": False}
EVERYTHING = {"session": True, "user": True, "messages": True, "csrf_cookie_read": True}


@pytest.mark.parametrize("header", ["Bearer pdk_anything", "bearer pdk_anything", "BEARER  pdk_x", "Bearer"])
def test_an_api_call_naming_a_key_skips_the_browser_session(header):
    request = RequestFactory().post(URL, HTTP_AUTHORIZATION=header, HTTP_COOKIE=BROWSER_COOKIES)

    assert keyed_api_call(request)
    assert through_the_session_middleware(request) == NOTHING


@pytest.mark.parametrize(
    ("path", "header"),
    [
        (URL, None),  # a signed-in browser calling the API: its session and CSRF token count
        (URL, "Basic dXNlcjpwYXNz"),  # not a key: the session authenticates it, if anything
        (URL, "Bearerpdk_x"),  # not the Bearer scheme (DRF reads the scheme up to the first space)
        ("/api/v1/auth/login/begin", "Bearer pdk_x"),  # the sign-in steps make and end sessions
        ("/api/v1/auth/logout", "Bearer pdk_x"),
        ("/dashboard/", "Bearer pdk_x"),  # pages never take a key
        ("/pay/abc", "Bearer pdk_x"),
        ("/apiv1/drafts", "Bearer pdk_x"),
    ],
)
def test_every_other_request_goes_through_it(path, header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    request = RequestFactory().post(path, HTTP_COOKIE=BROWSER_COOKIES, **extra)

    assert not keyed_api_call(request)
    assert through_the_session_middleware(request) == EVERYTHING


def test_the_settings_use_these_middlewares_in_place_of_djangos():
    ours = [SessionMiddleware, CsrfViewMiddleware, AuthenticationMiddleware, MessageMiddleware]
    assert {f"accounts.middleware.{cls.__name__}" for cls in ours} <= set(settings.MIDDLEWARE)
    djangos = ("django.contrib.sessions.", "django.contrib.auth.", "django.contrib.messages.", "django.middleware.csrf")
    assert not any(path.startswith(djangos) for path in settings.MIDDLEWARE)


@pytest.mark.django_db
def test_a_key_decides_a_call_even_beside_a_signed_in_browsers_cookies(owner, other_account, make_key):
    """A browser signed in as another account also sends a key: the key's account answers, no
    CSRF token is asked for, and no cookie is set or varied on."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(other_account)
    client.get("/admin/login/")  # the csrftoken cookie, as any page of the site sets it

    response = client.post(URL, entry_body("Keyed"), format="json", HTTP_AUTHORIZATION=f"Bearer {make_key(user=owner)}")

    assert response.status_code == 200, response.json()
    assert AddressBookEntry.objects.get(label="Keyed").user == owner
    assert not response.cookies
    assert "Cookie" not in response.get("Vary", "")


@pytest.mark.django_db
def test_a_signed_in_browser_without_a_key_still_needs_its_csrf_token(other_account):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(other_account)
    client.get("/admin/login/")

    refused = client.post(URL, entry_body("No token"), format="json")
    assert refused.status_code == 403
    accepted = client.post(URL, entry_body("Token"), format="json", HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    assert accepted.status_code == 200
    assert AddressBookEntry.objects.get(label="Token").user == other_account
    assert client.get(URL).json()["total"] == 1  # the session reads as before


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/v1/auth/logout", "/api/v1/auth/login/begin"])
def test_a_sign_in_step_called_with_a_key_still_has_its_session(api_client, path):
    response = api_client.post(path, {}, format="json")

    assert response.status_code < 500, response.content

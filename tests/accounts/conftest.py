"""Helpers for the human-account flows: a browser-like client (cookies, CSRF enforced once
signed in) and the codes the service emailed, read from the test mail outbox."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from rest_framework.test import APIClient

from notifications.services import emails_send_due

PASSWORD = "violet-harbor-42-lantern"
# An emailed code as the email shows it: two groups of five from Crockford's base 32.
CODE_RE = re.compile(r"\b([0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5})\b")


def emailed_code(to: str) -> str:
    """Send what the outbox holds (as the worker would) and return the newest code sent to `to`."""
    emails_send_due()
    for message in reversed(mail.outbox):
        if to in message.to:
            found = CODE_RE.search(message.body)
            if found:
                return found.group(1)
    raise AssertionError(f"no code was emailed to {to}")


def csrf_post(client: APIClient, path: str, data=None, **kwargs):
    """A browser's write under session auth: the CSRF token from the cookie in the header."""
    token = client.cookies["csrftoken"].value if "csrftoken" in client.cookies else ""
    return client.post(path, data or {}, format="json", HTTP_X_CSRFTOKEN=token, **kwargs)


def csrf_call(client: APIClient, method: str, path: str, data=None):
    token = client.cookies["csrftoken"].value if "csrftoken" in client.cookies else ""
    return getattr(client, method)(path, data or {}, format="json", HTTP_X_CSRFTOKEN=token)


@pytest.fixture
def browser() -> APIClient:
    return APIClient(enforce_csrf_checks=True)


def register(client: APIClient, email: str, password: str = PASSWORD):
    assert (
        client.post("/api/v1/auth/password/register", {"email": email, "password": password}, format="json").status_code
        == 200
    )
    response = client.post("/api/v1/auth/password/register/complete", {"code": emailed_code(email)}, format="json")
    assert response.status_code == 200, response.content
    return response


def sign_in(client: APIClient, email: str, password: str = PASSWORD):
    step = client.post("/api/v1/auth/password/login", {"email": email, "password": password}, format="json")
    assert step.status_code == 200, step.content
    response = client.post("/api/v1/auth/password/login/complete", {"code": emailed_code(email)}, format="json")
    assert response.status_code == 200, response.content
    return response


@pytest.fixture
def registered(db, browser):
    """A browser that registered merchant@example.com with a password and is signed in."""
    register(browser, "merchant@example.com")
    mail.outbox.clear()
    return browser

"""Forgotten password through the account pages: the same answer for any address, then the
emailed code and a new password; the old password stops working."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import Client

from notifications.services import emails_send_due
from tests.accounts.conftest import CODE_RE

pytestmark = pytest.mark.django_db


def test_a_forgotten_password_is_reset_with_the_emailed_code(owner):
    client = Client()
    assert client.get("/account/forgot").status_code == 200
    response = client.post("/account/forgot", {"email": owner.email})
    assert response.status_code == 302 and response["Location"] == "/account/forgot/code"
    emails_send_due()
    code = CODE_RE.search([m for m in mail.outbox if owner.email in m.to][-1].body).group(1)
    wrong = client.post("/account/forgot/code", {"code": "000000", "newPassword": "violet-harbor-42-lantern"})
    assert wrong.status_code >= 400 and "code" in wrong.context["form"].errors
    done = client.post("/account/forgot/code", {"code": code, "newPassword": "violet-harbor-42-lantern"})
    assert done.status_code == 302 and done["Location"].startswith("/account/sign-in")
    owner.refresh_from_db()
    assert owner.check_password("violet-harbor-42-lantern")


def test_an_unknown_address_gets_the_same_answer(db):
    client = Client()
    response = client.post("/account/forgot", {"email": "nobody@example.com"})
    assert response.status_code == 302 and response["Location"] == "/account/forgot/code"
    assert "nobody@example.com" in client.get("/account/forgot/code").content.decode()

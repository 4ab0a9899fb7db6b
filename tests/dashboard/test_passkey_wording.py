"""What the passkey buttons say when a passkey fails is the page's, in the merchant's language:
the words come from the page (data-text-* on the button, dashboard/_passkey_texts.html) and
passkeys.js picks one by what went wrong, never showing the API's English detail or the
browser's own message."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from accounts.models import Passkey
from accounts.profiles import merchant_profile_update
from tests.conftest import stepped_up
from tests.dashboard.test_browser import _signed_in_context

WORDS = ("failed", "cancelled", "exists", "refused", "expired", "offline")
BUTTON = re.compile(r"<button\b[^>]*\bdata-passkey=\"[^\"]+\"[^>]*>")


def passkey_words(page: str) -> dict[str, str]:
    """The data-text-* of the page's passkey button."""
    button = BUTTON.search(page)
    assert button, "the page has a passkey button"
    return {name: html.unescape(value) for name, value in re.findall(r'data-text-([a-z]+)="([^"]*)"', button.group(0))}


def pages(client: Client, owner) -> dict[str, str]:
    Passkey.objects.create(user=owner, name="Phone", credential_id="cred-1", public_key=b"k")  # the step-up button
    found = {path: client.get(path).content.decode() for path in ("/dashboard/security/", "/dashboard/confirm")}
    client.logout()
    found["/account/sign-in"] = client.get("/account/sign-in", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    return found


@pytest.mark.django_db
def test_every_passkey_button_carries_its_failure_words_in_the_merchants_language(owner):
    merchant_profile_update(user=owner, changes={"language": "de"})
    english = passkey_words(Client().get("/account/sign-in", HTTP_ACCEPT_LANGUAGE="en").content.decode())

    for path, page in pages(stepped_up(Client(), owner), owner).items():
        words = passkey_words(page)
        assert sorted(words) == sorted(WORDS), path
        assert all(words[word] and words[word] != english[word] for word in WORDS), (path, words)
    assert words["exists"] == "Dieser Passkey ist bereits in Ihrem Konto."


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(240)
def test_adding_the_same_passkey_again_says_so_in_german(chromium, live_server, owner, settings):
    """Chromium's virtual authenticator refuses a second registration of a credential the
    account already has (excludeCredentials): the browser's English error is not shown, the
    page's German words are."""
    settings.BASE_URL = live_server.url
    merchant_profile_update(user=owner, changes={"language": "de"})
    context = _signed_in_context(chromium, live_server, owner, 1280, 860)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})  # fmt: skip
    page.goto(f"{live_server.url}/dashboard/security/")
    page.get_by_role("button", name="Passkey hinzufügen").click()
    page.get_by_text("Passkey · hinzugefügt").first.wait_for(timeout=20000)

    page.get_by_role("button", name="Passkey hinzufügen").click()
    result = page.locator("#passkey-add-result")
    result.filter(has_text="Dieser Passkey").wait_for(timeout=20000)

    assert result.inner_text() == "Dieser Passkey ist bereits in Ihrem Konto."
    assert owner.passkeys.count() == 1
    context.close()

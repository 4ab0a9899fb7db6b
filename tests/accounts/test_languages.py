"""The dashboard speaks the account's language when it is translated into it, English
otherwise; a browser's Accept-Language never changes it. The account's language and time
zone come from its merchant profile (accounts.profiles)."""

from __future__ import annotations

import subprocess

import pytest
from django.test import Client

from accounts.languages import account_language, account_time_zone
from accounts.profiles import merchant_profile_update
from tests.drafts.conftest import ADDRESSES

pytestmark = pytest.mark.django_db


def profile_set(user, **changes) -> None:
    merchant_profile_update(user=user, changes=changes)


@pytest.fixture
def browser(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def html_lang(response) -> str:
    return response.content.decode().split("<html", 1)[1].split(">", 1)[0]


def test_an_account_without_a_profile_reads_english_and_utc(owner):
    assert account_language(owner) == "en" and account_time_zone(owner) == "UTC"


def test_the_dashboard_ignores_the_browsers_language(browser):
    response = browser.get("/dashboard/", HTTP_ACCEPT_LANGUAGE="de")

    assert 'lang="en"' in html_lang(response) and "Overview" in response.content.decode()


def test_the_dashboard_follows_the_accounts_language_once_it_is_translated(browser, owner, settings):
    profile_set(owner, language="de", time_zone="Europe/Berlin")
    settings.DASHBOARD_LANGUAGES = ["en"]

    untranslated = browser.get("/dashboard/")
    settings.DASHBOARD_LANGUAGES = ["en", "de"]
    translated = browser.get("/dashboard/")

    assert 'lang="en"' in html_lang(untranslated)  # no German dashboard yet: English, honestly labelled
    assert 'lang="de"' in html_lang(translated)
    assert account_time_zone(owner) == "Europe/Berlin"


def test_the_pdf_of_a_draft_is_in_the_accounts_language_or_the_one_asked_for(owner, api_client):
    profile_set(owner, language="fr")
    client = api_client
    draft = client.post(
        "/api/v1/drafts",
        {"network": "Ethereum", "currency": "USDC", "receiverAddress": ADDRESSES["Ethereum"], "amountSats": 5_000_000},
        format="json",
    ).json()

    french = client.get(f"/api/v1/drafts/{draft['id']}/pdf")
    japanese = client.get(f"/api/v1/drafts/{draft['id']}/pdf", {"lang": "ja"})
    refused = client.get(f"/api/v1/drafts/{draft['id']}/pdf", {"lang": "xx"})

    assert french.status_code == 200 and japanese.status_code == 200
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "lang"
    assert _pdf_text(french.content).count("Projet de paiement") == 1
    assert "支払い下書き" in _pdf_text(japanese.content)


def _pdf_text(pdf: bytes) -> str:
    return subprocess.run(["pdftotext", "-", "-"], input=pdf, capture_output=True, check=True).stdout.decode()

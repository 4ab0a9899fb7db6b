"""A refusal of the domain (a Problem raised by a shared service, not by the page's form) reaches
the merchant in the account's language, naming the field by its label: posted through the
dashboard's forms in German, Arabic and Japanese, no English detail and no field or setting
name is left in what the page says went wrong. The API keeps its English, machine-readable
problem documents whatever language the account reads its pages in."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.profiles import merchant_profile_update
from tests.conftest import stepped_up
from tests.dashboard.test_every_page_language import data_values, english_left
from tests.dashboard.test_merchant_wording import seen_text, wording_faults

pytestmark = pytest.mark.django_db

LANGUAGES = ("de", "ar", "ja")
# Each a post the page's form accepts and a domain service refuses.
REFUSED = [
    ("/dashboard/profile/", {"display_name": "Shop", "support_url": "https://user:pw@shop.example",
                             "display_currency": "EUR", "time_zone": "UTC", "language": "{language}"}),
    ("/dashboard/profile/", {"display_name": "Shop", "support_url": "http://shop.example",
                             "support_email": "help@shop.example", "display_currency": "EUR", "time_zone": "UTC",
                             "language": "{language}"}),
    ("/dashboard/drafts/new", {"network": "Ethereum", "currency": "USDC", "receiverAddress": "0xnot-an-address",
                               "pricing": "exact", "amount": "12.5", "expiryHours": 24}),
    ("/dashboard/address-book/", {"network": "Mainnet", "address": "not-an-address", "direction": "Receiving"}),
    ("/dashboard/webhooks/", {"url": "https://user:pw@127.0.0.1/hook"}),
    ("/dashboard/webhooks/", {"url": "ftp://shop.example/hook"}),
    ("/dashboard/receiving-wallets/", {"network": "Mainnet", "descriptor": "xpub-not-a-key"}),
]  # fmt: skip
# A field's or the form's error, or an error message at the top of the page.
ERRORS = re.compile(r'<(span|div|p)\b[^>]*class="(?:error|msg msg-error)"[^>]*>.*?</\1>', re.S)


def refusals(client: Client, path: str, body: dict, language: str) -> str:
    """What the page says went wrong, as HTML."""
    body = {key: value.format(language=language) if isinstance(value, str) else value for key, value in body.items()}
    page = client.post(path, body, follow=True).content.decode()
    return "\n".join(m.group(0) for m in ERRORS.finditer(page))


def english_runs(english: str, translated: str) -> set[str]:
    """Runs of three English words the translated text repeats: a sentence left in English
    around a translated field label ("Support-Seite must not carry a user name")."""

    def runs(text: str) -> set[str]:
        words = re.findall(r"[A-Za-z']+", seen_text(text))
        return {" ".join(words[i : i + 3]) for i in range(len(words) - 2)}

    return runs(english) & runs(translated)


@pytest.fixture
def browser(owner, settings) -> Client:
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    return stepped_up(Client(), owner)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("path", "body"), REFUSED, ids=[f"{path}#{n}" for n, (path, _b) in enumerate(REFUSED)])
def test_a_domain_refusal_reads_in_the_merchants_language(browser, owner, path, body, language):
    merchant_profile_update(user=owner, changes={"language": "en"})
    english = refusals(browser, path, body, "en")
    merchant_profile_update(user=owner, changes={"language": language})
    translated = refusals(browser, path, body, language)

    assert seen_text(english).strip(), "the post was refused"
    assert seen_text(translated).strip() and seen_text(translated) != seen_text(english)
    assert english_left(english, translated, language, data_values(owner)) == set()
    assert english_runs(english, translated) == set()
    assert wording_faults(translated) == []


def test_the_api_answers_the_same_refusal_in_english(api_client, owner):
    merchant_profile_update(user=owner, changes={"language": "de"})
    refused = api_client.post(
        "/api/v1/webhooks", {"url": "https://user:pw@shop.example/hook"}, format="json", HTTP_ACCEPT_LANGUAGE="de"
    )

    assert refused.status_code == 400
    assert refused.json()["code"] and "The URL may not contain credentials." in refused.json()["detail"]

"""A refusal of the domain (a Problem raised by a shared service, not by the page's form) reaches
the merchant in the account's language, naming the field by its label: posted through the
dashboard's forms in German, Arabic and Japanese, no English detail and no field or setting
name is left in what the page says went wrong. The API keeps its English, machine-readable
problem documents whatever language the account reads its pages in."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import translation

from accounts.profiles import merchant_profile_update
from fees.models import AccruedFee
from notifications.emails import email_render
from notifications.models import EmailNotification
from tests.conftest import stepped_up
from tests.dashboard.test_every_page_language import data_values, english_left
from tests.dashboard.test_merchant_wording import seen_text, wording_faults
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import make_draft
from tests.recurring.test_runs import at, make_template, tick_at

pytestmark = pytest.mark.django_db

LANGUAGES = ("de", "ar", "ja")
EXACT = {"pricing": "exact", "amount": "12.5", "expiryHours": 24}
USDC_CONTRACT = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
TPUB = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"
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
    # The address book's own refusals.
    ("/dashboard/address-book/", {"network": "Mainnet", "address": ADDRESSES["Mainnet"], "direction": "Sending",
                                  "is_default": "on"}),
    # A draft's planning: no receiver, an amount past any real payment, the operator's fee address.
    ("/dashboard/drafts/new", {"network": "Ethereum", "currency": "USDC", **EXACT}),
    ("/dashboard/drafts/new", {"network": "Ethereum", "currency": "USDC", "receiverAddress": ADDRESSES["Ethereum"],
                               **EXACT, "amount": "99999999999999"}),
    ("/dashboard/drafts/new", {"network": "Mainnet", "currency": "BTC", "receiverAddress": FEE_ADDRESSES["Mainnet"],
                               **EXACT, "amount": "0.01"}),
    ("/dashboard/templates/", {"name": "Rent", "interval": "Daily", "timezone": "UTC", "network": "Ethereum",
                               "currency": "USDC", **EXACT}),
    # Receivers nobody can be paid at, and the rarer address reasons.
    ("/dashboard/drafts/new", {"network": "Mainnet", "currency": "BTC", "receiverAddress": ADDRESSES["Mainnet"],
                               **EXACT, "amount": "0.000001"}),
    ("/dashboard/drafts/new", {"network": "Ethereum", "currency": "USDC", "receiverAddress": USDC_CONTRACT, **EXACT}),
    ("/dashboard/drafts/new", {"network": "Ethereum", "currency": "USDC", "receiverAddress": "0x" + "0" * 39 + "1",
                               **EXACT}),
    ("/dashboard/drafts/new", {"network": "Ethereum", "currency": "USDC", "receiverAddress": "0x" + "0" * 40, **EXACT}),
    ("/dashboard/drafts/new", {"network": "Solana", "currency": "USDC", "receiverAddress": "x" * 200, **EXACT}),
    # A receiving wallet's rarer descriptor refusals.
    ("/dashboard/receiving-wallets/", {"network": "Mainnet", "descriptor": TPUB}),
    ("/dashboard/receiving-wallets/", {"network": "Testnet", "descriptor": "wpkh(nothing)"}),
    ("/dashboard/receiving-wallets/", {"network": "Testnet", "descriptor": f"pkh({TPUB}/0/*)"}),
    ("/dashboard/receiving-wallets/", {"network": "Testnet", "descriptor": TPUB}),
    ("/dashboard/receiving-wallets/", {"network": "Testnet", "descriptor": f"wpkh({TPUB}/1h/0/*)"}),
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
    settings.PLATFORM_FEE_ADDRESSES = FEE_ADDRESSES
    return stepped_up(Client(), owner)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("path", "body"), REFUSED, ids=[f"{path}#{n}" for n, (path, _b) in enumerate(REFUSED)])
def test_a_domain_refusal_reads_in_the_merchants_language(browser, owner, path, body, language):
    merchant_profile_update(user=owner, changes={"language": "en"})
    english = refusals(browser, path, body, "en")
    merchant_profile_update(user=owner, changes={"language": language})
    translated = refusals(browser, path, body, language)

    assert_translated(owner, english, translated, language)


def assert_translated(owner, english: str, translated: str, language: str) -> None:
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


def test_an_address_already_in_the_address_book_is_refused_in_the_merchants_language(browser, owner):
    body = {"network": "Mainnet", "address": ADDRESSES["Mainnet"], "direction": "Receiving"}
    browser.post("/dashboard/address-book/", body)
    for language in LANGUAGES:
        merchant_profile_update(user=owner, changes={"language": "en"})
        english = refusals(browser, "/dashboard/address-book/", body, "en")
        merchant_profile_update(user=owner, changes={"language": language})

        assert_translated(owner, english, refusals(browser, "/dashboard/address-book/", body, language), language)


def test_attaching_a_transfer_no_longer_on_chain_is_refused_in_the_merchants_language(browser, owner):
    from chainwatch.matching import match_network
    from chainwatch.models import ObservedTransfer, UnmatchedTransfer

    draft = make_draft(owner, amount_base_units=25_000_000, required_confirmations=1)
    ObservedTransfer.objects.create(
        network="Ethereum", txid="0xfar", index=0, currency="USDC", token_address=USDC_CONTRACT,
        receiver_address=ADDRESSES["Ethereum"].lower(), amount_base_units=20_000_000, block_height=100,
        block_hash="0xblock",
    )  # fmt: skip
    match_network(network="Ethereum", head=200)
    report = UnmatchedTransfer.objects.get()
    ObservedTransfer.objects.update(orphaned=True)  # reorganised away while the page was open
    body = {f"{report.id}-draftId": str(draft.id), f"{report.id}-acceptAmount": "on"}
    path = f"/dashboard/transfers/{report.id}/attach"
    for language in LANGUAGES:
        merchant_profile_update(user=owner, changes={"language": "en"})
        english = refusals(browser, path, body, "en")
        merchant_profile_update(user=owner, changes={"language": language})

        assert_translated(owner, english, refusals(browser, path, body, language), language)


@pytest.fixture
def refused_run(owner, settings):
    """A daily template whose run was refused by the worker (fees outstanding), its email queued."""
    settings.PLATFORM_FEE_ADDRESSES = FEE_ADDRESSES
    template = make_template(owner, interval="Daily", first="2027-01-10T09:00:00Z")
    paid = make_draft(owner, status="Confirmed", fee_usd=Decimal("30"))
    AccruedFee.objects.create(user=owner, draft=paid, fee_usd=Decimal("30"), fee_base_units=30_000_000,
                              currency="USDC", network="Ethereum", accrued_at=at("2027-01-09T00:00:00Z"))  # fmt: skip
    with translation.override("en"):  # the worker's language
        assert tick_at("2027-01-10T09:00:05Z") == 1
    template.refresh_from_db()
    return template


def refusal_shown(browser) -> str:
    return "\n".join(m.group(0) for m in ERRORS.finditer(browser.get("/dashboard/templates/").content.decode()))


def email_shown(owner, language: str) -> str:
    """The refusal's email as a member reading `language` gets it (links, which are data, left out)."""
    (email,) = EmailNotification.objects.filter(user=owner, kind="recurring_run_refused")
    email.context["language"] = language  # kept with each member's row when it is queued
    subject, text, html = email_render(email)
    return re.sub(r"https?://\S+", " ", f"<p>{subject}</p><p>{text}</p>{html}")


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_refused_recurring_run_reads_in_the_merchants_language_on_the_page_and_in_the_email(
    browser, owner, refused_run, language
):
    merchant_profile_update(user=owner, changes={"language": "en"})
    english_page, english_email = refusal_shown(browser), email_shown(owner, "en")
    merchant_profile_update(user=owner, changes={"language": language})
    page, email = refusal_shown(browser), email_shown(owner, language)

    assert "Accrued fees of 30.00 USD must be settled first, on the Fees page." in seen_text(english_page)
    assert "Accrued fees of 30.00 USD must be settled first, on the Fees page." in english_email
    assert_translated(owner, english_page, page, language)
    assert "30.00" in seen_text(page) and "30.00" in email  # the amount kept, worded around it
    assert english_runs(english_email, email) == set()
    assert "fees_outstanding" not in english_email + email and wording_faults(email) == []
    assert "/api/v1/" not in english_email + email  # the dashboard's page, not the API's route
    assert set(refused_run.last_refusal) >= {"code", "detail", "wording"}


def test_the_api_shows_a_recurring_refusal_as_before(api_client, owner, refused_run):
    refusal = api_client.get(f"/api/v1/recurring-templates/{refused_run.id}").json()["lastRefusal"]

    assert set(refusal) == {"code", "status", "detail", "runAt", "at"}
    assert refusal["code"] == "fees_outstanding" and "POST /api/v1/fees/accrued/settle" in refusal["detail"]


def test_a_refusal_recorded_before_its_wording_was_kept_still_shows_its_english(browser, owner, refused_run):
    refused_run.last_refusal = {key: v for key, v in refused_run.last_refusal.items() if key != "wording"}
    refused_run.last_refusal["detail"] = "Accrued fees of 30.00 USD must be settled first."
    refused_run.save()
    merchant_profile_update(user=owner, changes={"language": "de"})

    assert "Accrued fees of 30.00 USD must be settled first." in seen_text(refusal_shown(browser))


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_draft_refused_for_outstanding_fees_sends_the_merchant_to_the_fees_page_in_their_language(
    browser, owner, language
):
    paid = make_draft(owner, status="Confirmed", fee_usd=Decimal("30"))
    AccruedFee.objects.create(user=owner, draft=paid, fee_usd=Decimal("30"), fee_base_units=30_000_000,
                              currency="USDC", network="Ethereum", accrued_at=paid.created_at)  # fmt: skip
    body = {"network": "Ethereum", "currency": "USDC", "receiverAddress": ADDRESSES["Ethereum"], **EXACT}
    merchant_profile_update(user=owner, changes={"language": "en"})
    english = refusals(browser, "/dashboard/drafts/new", body, "en")
    merchant_profile_update(user=owner, changes={"language": language})
    translated = refusals(browser, "/dashboard/drafts/new", body, language)

    assert "Fees page" in seen_text(english) and "/api/v1/" not in english  # the page, not the API's request
    assert "/api/v1/" not in translated
    assert_translated(owner, english, translated, language)

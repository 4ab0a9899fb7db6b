"""What a merchant reads on the dashboard is written for them: an error names the field by its
label and says what to do, never a field's code name (support_url) or a setting's
(RATES_BUNDLED_ALLOWED); amounts are in the asset's units with its code, never "base units"
(the API keeps those); the Transfers page's times are formatted in the merchant's time zone.

The scan reads the text a person sees on every dashboard page (text, labels, titles,
placeholders; not identifiers shown in monospace, such as addresses, keys and transaction ids),
with data on each page and with the forms' errors shown."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from accounts.profiles import merchant_profile_update
from drafts.models import Draft
from tests.conftest import stepped_up
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import draft_payment_observed, make_draft

pytestmark = pytest.mark.django_db

SNAKE_CASE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
SETTING_NAME = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
BASE_UNITS = re.compile(r"base units", re.I)
SEEN_ATTRIBUTES = ("title", "placeholder", "aria-label", "alt")


class SeenText(HTMLParser):
    """The text of a page a person reads: no script or style, nothing in monospace or <code>."""

    SKIPPED = {"script", "style", "code", "svg", "template"}
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[bool] = []  # per open element: is it skipped
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        skipped = tag in self.SKIPPED or "mono" in (values.get("class") or "").split()
        if not any(self.stack) and not skipped:
            self.parts.extend(str(values[a]) for a in SEEN_ATTRIBUTES if values.get(a))
        if tag not in self.VOID:
            self.stack.append(skipped)

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not any(self.stack):
            self.parts.append(data)


def seen_text(html: str) -> str:
    parser = SeenText()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def wording_faults(html: str) -> list[str]:
    text = seen_text(html)
    return sorted({m.group(0) for pattern in (SNAKE_CASE, SETTING_NAME, BASE_UNITS) for m in pattern.finditer(text)})


@pytest.fixture(autouse=True)
def _operator(settings):
    settings.PLATFORM_FEE_ADDRESSES = FEE_ADDRESSES
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    settings.RATES_BUNDLED_ALLOWED = True  # the "prices are not live" banner on every page


@pytest.fixture
def browser(owner) -> Client:
    return stepped_up(Client(), owner)


@pytest.fixture
def account_with_data(owner, browser, api_client):
    """An account with something on every page: a paid draft with a refund, a pay link, a
    webhook, an API key, an address-book entry, a recurring template and an unmatched transfer."""
    from chainwatch.matching import match_network
    from chainwatch.models import ObservedTransfer

    merchant_profile_update(user=owner, changes={"time_zone": "Europe/Berlin", "display_name": "Shop"})
    made = api_client.post(
        "/api/v1/drafts",
        {"network": "Ethereum", "currency": "USDC", "receiverAddress": ADDRESSES["Ethereum"],
         "amountSats": 4_242_321, "memo": "order 7"},
        format="json",
    )  # fmt: skip
    assert made.status_code == 201, made.json()
    paid = draft_payment_observed(
        draft_id=made.json()["id"], tx_id="0x" + "ab" * 32, received_base_units=4_242_321, confirmations=100
    )
    refund = browser.post(
        f"/dashboard/drafts/{paid.id}/refund",
        {"kind": "full", "currency": "USDC", "network": "Ethereum", "expiryHours": 336},
    )
    assert refund.status_code == 302
    assert browser.post("/dashboard/pay-links/new", {
        "fiatCurrency": "EUR", "fiatAmount": "35.00", "option0_currency": "USDC", "option0_network": "Ethereum",
        "option0_receiverAddress": ADDRESSES["Ethereum"], "orderId": "A-100", "expiryHours": "72",
    }).status_code == 302  # fmt: skip
    browser.post("/dashboard/webhooks/", {"url": "http://127.0.0.1:9/hook"})
    browser.post("/dashboard/api-keys/", {"name": "shop", "scopes": ["drafts:read"]})
    browser.post("/dashboard/address-book/", {"label": "Cold", "network": "Mainnet", "address": ADDRESSES["Mainnet"],
                                             "direction": "Receiving"})  # fmt: skip
    waiting = make_draft(owner, amount_base_units=25_000_000, required_confirmations=1)
    ObservedTransfer.objects.create(network="Ethereum", txid="0xfar", index=0, currency="USDC",
                                    token_address="0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
                                    receiver_address=waiting.receiver_address.lower(), amount_base_units=20_000_000,
                                    block_height=100, block_hash="0xb")  # fmt: skip
    match_network(network="Ethereum", head=200)
    return paid


def pages_of(owner, paid: Draft) -> list[str]:
    from paylinks.models import PaymentRequest
    from refunds.models import Refund
    from webhooks.models import Webhook

    return [
        "/dashboard/", "/dashboard/drafts/", "/dashboard/drafts/new", f"/dashboard/drafts/{paid.id}/",
        f"/dashboard/drafts/{paid.id}/refund", "/dashboard/refunds/", f"/dashboard/refunds/{Refund.objects.get().id}/",
        "/dashboard/pay-links/", "/dashboard/pay-links/new",
        f"/dashboard/pay-links/{PaymentRequest.objects.get(user=owner).id}/",
        "/dashboard/webhooks/", f"/dashboard/webhooks/{Webhook.objects.get(user=owner).id}/", "/dashboard/api-keys/",
        "/dashboard/fees/", "/dashboard/transfers/", "/dashboard/transfers/?matched=true", "/dashboard/templates/",
        "/dashboard/address-book/", "/dashboard/receiving-wallets/", "/dashboard/security/",
        "/dashboard/notifications/", "/dashboard/profile/", "/dashboard/team", "/dashboard/audit-log",
        "/dashboard/confirm",
    ]  # fmt: skip


def test_every_dashboard_page_reads_without_code_names_settings_or_base_units(browser, owner, account_with_data):
    faults = {}
    for path in pages_of(owner, account_with_data):
        response = browser.get(path)
        assert response.status_code == 200, path
        if found := wording_faults(response.content.decode()):
            faults[path] = found
    assert faults == {}


# Each form posted wrong: the errors shown must name fields by their labels.
WRONG_POSTS = [
    ("/dashboard/profile/", {"display_name": "Shop", "support_url": "http://shop.example", "support_email": "nope",
                             "display_currency": "EUR", "time_zone": "Mars/Olympus", "language": "en"}),
    ("/dashboard/profile/", {"display_name": "Shop", "support_url": "https://user:pw@shop.example",
                             "display_currency": "EUR", "time_zone": "UTC", "language": "en"}),
    ("/dashboard/drafts/new", {"network": "Ethereum", "currency": "USDC", "receiverAddress": "0xnot-an-address",
                               "pricing": "exact", "amount": "12.5", "expiryHours": 24}),
    ("/dashboard/drafts/new", {"network": "Ethereum", "currency": "USDC", "pricing": "fiat", "fiatCurrency": "XYZ",
                               "expiryHours": 24}),
    ("/dashboard/pay-links/new", {"fiatCurrency": "EUR", "fiatAmount": "35", "option0_currency": "USDC",
                                  "option0_network": "Ethereum", "option0_receiverAddress": "0xnope",
                                  "returnUrl": "http://shop.example", "expiryHours": "72"}),
    ("/dashboard/address-book/", {"network": "Mainnet", "address": "not-an-address", "direction": "Receiving"}),
    ("/dashboard/webhooks/", {"url": "https://user:pw@127.0.0.1/hook"}),
    ("/dashboard/templates/", {"interval": "Weekly", "timezone": "Nowhere/City", "network": "Ethereum",
                               "currency": "USDC", "pricing": "exact", "amount": "5", "expiryHours": 24}),
    ("/dashboard/receiving-wallets/", {"network": "Mainnet", "descriptor": "xprv-not-public"}),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body"), WRONG_POSTS)
def test_a_forms_errors_name_the_fields_label_not_its_code_name(browser, path, body):
    response = browser.post(path, body, follow=True)
    page = response.content.decode()

    assert 'class="error"' in page or "errorlist" in page or "msg-error" in page, "the post was refused"
    assert wording_faults(page) == []


def test_the_profile_error_names_the_support_page_by_its_label(browser):
    body = {**WRONG_POSTS[0][1], "support_email": "help@shop.example", "time_zone": "UTC"}
    page = browser.post("/dashboard/profile/", body).content.decode()

    assert "Support page must be an absolute https:// URL." in page
    assert "support_url" not in seen_text(page)


def test_the_draft_page_shows_the_amount_in_the_assets_units_with_its_code(browser, account_with_data):
    page = seen_text(browser.get(f"/dashboard/drafts/{account_with_data.id}/").content.decode())

    assert "4.242321 USDC" in page
    assert "4242321" not in page and "4,242,321" not in page


def test_transfer_times_are_formatted_in_the_merchants_time_zone(browser, account_with_data):
    from chainwatch.models import ObservedTransfer

    seen_at = ObservedTransfer.objects.get(txid="0xfar").first_seen_at
    page = browser.get("/dashboard/transfers/").content.decode()
    text = seen_text(page)

    assert "20.000000\u00a0USDC" in text or "20.000000 USDC" in text
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:", text)  # no ISO 8601
    # "Nov 29, 2026, 9:49:26 AM Europe/Berlin": Babel's medium form, in the profile's zone
    berlin = seen_at.astimezone(ZoneInfo("Europe/Berlin"))
    assert f"{berlin.year}, {berlin.hour % 12 or 12}:{berlin:%M:%S}" in text and "Europe/Berlin" in text


def test_attaching_a_transfer_too_far_off_says_which_box_to_tick(browser, account_with_data):
    from chainwatch.models import UnmatchedTransfer

    report = UnmatchedTransfer.objects.get()
    draft_id = Draft.objects.get(id__in=report.candidate_draft_ids, status="Pending").id
    refused = browser.post(f"/dashboard/transfers/{report.id}/attach", {f"{report.id}-draftId": str(draft_id)},
                           follow=True)  # fmt: skip
    text = seen_text(refused.content.decode())

    assert "more than 10%. To attach it anyway, tick “Accept the amount even if it differs by more than 10%”." in text
    assert "acceptAmount" not in text and wording_faults(refused.content.decode()) == []

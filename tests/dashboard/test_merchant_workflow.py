"""The merchant's forms and pages do the work: lists that fit the chosen network, amounts in the
asset's units, supported fiat currencies, Lightning fields, a fee preview that agrees with the
draft it creates, the default receiving address, times and money shown the account's way, and a
pay link's abandoned drafts kept out of the way."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from addressbook.models import AddressBookEntry
from core.ids import short_id
from dashboard import charts
from dashboard.forms import SettleForm
from dashboard.preferences import Display, display_of
from drafts.enums import DraftStatus
from drafts.models import Draft
from payments import formatting
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import make_draft
from tests.formats.conftest import make_invoice, node_key  # noqa: F401 - Lightning fixtures
from webhooks.models import Event

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _operator():
    with override_settings(PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES, OUTBOUND_ALLOW_LOOPBACK=True):
        yield


@pytest.fixture
def browser(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def options_of(html: str, name: str) -> dict[str, bool]:
    """{value: enabled} of a select's options."""
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S).group(1)
    return {m.group(1): "disabled" not in m.group(0) for m in re.finditer(r'<option value="([^"]*)"[^>]*>', select)}


BASE_EXACT = {"network": "Base", "currency": "USDC", "pricing": "exact", "amount": "12.5", "expiryHours": "24"}


# --- The create-draft form ---------------------------------------------------------------


def test_the_currency_and_method_lists_fit_the_network_without_javascript(browser):
    first = browser.get("/dashboard/drafts/new").content.decode()
    assert options_of(first, "currency")["BTC"] and not options_of(first, "currency")["SOL"]  # Bitcoin first

    page = browser.post("/dashboard/drafts/new", {"network": "Solana", "refresh": "1"}).content.decode()

    currencies = options_of(page, "currency")
    assert currencies["SOL"] and currencies["USDC"] and not currencies["ETH"]
    assert not options_of(page, "paymentMethod")["Lightning"]
    assert 'data-networks="' in page and not Draft.objects.exists()
    assert 'class="error"' not in page  # only the lists changed


def test_an_exact_amount_is_typed_in_the_assets_units(browser, owner):
    body = BASE_EXACT | {"receiverAddress": ADDRESSES["Base"]}
    preview = browser.post("/dashboard/drafts/new", body | {"preview": "1"}).content.decode()
    assert "12.500000 USDC." in preview and "base units" not in preview

    browser.post("/dashboard/drafts/new", body)

    assert Draft.objects.get(user=owner).amount_base_units == 12_500_000


def test_more_decimals_than_the_asset_has_are_refused_on_the_amount(browser):
    response = browser.post("/dashboard/drafts/new", BASE_EXACT | {"amount": "0.0000001"})
    assert response.context["form"].errors["amount"] and not Draft.objects.exists()


def test_the_fiat_currency_is_one_of_the_supported_and_offered_as_a_searchable_list(browser):
    page = browser.get("/dashboard/drafts/new").content.decode()
    assert 'list="fiat-currencies"' in page and '<option value="JPY">' in page

    body = BASE_EXACT | {"pricing": "fiat", "fiatCurrency": "XYZ", "fiatAmount": "10"}
    errors = browser.post("/dashboard/drafts/new", body).context["form"].errors["fiatCurrency"]

    assert len(errors) == 1 and len(errors[0]) < 80  # a sentence, not the 165 codes
    assert not Draft.objects.exists()


def test_lightning_shows_its_invoice_field_and_a_draft_is_made_from_the_invoice(browser, owner, make_invoice):  # noqa: F811
    shown = browser.post("/dashboard/drafts/new", {"network": "Mainnet", "paymentMethod": "Lightning", "refresh": "1"})
    assert re.search(r'<fieldset id="lightning-fields" data-lightning-fields>', shown.content.decode())
    hidden = browser.get("/dashboard/drafts/new").content.decode()
    assert '<fieldset id="lightning-fields" data-lightning-fields hidden>' in hidden

    lightning = {"network": "Mainnet", "currency": "BTC", "paymentMethod": "Lightning", "pricing": "exact",
                 "expiryHours": "24"}  # fmt: skip
    missing = browser.post("/dashboard/drafts/new", lightning)
    assert missing.context["form"].errors["bolt11"]

    invoice = make_invoice(amount_msat=250_000_000, date=int(timezone.now().timestamp()))
    created = browser.post("/dashboard/drafts/new", lightning | {"bolt11": invoice})

    draft = Draft.objects.get(user=owner)
    assert created.status_code == 302 and draft.method == "Lightning" and draft.amount_base_units == 250_000
    assert draft.bolt11 == invoice


def test_the_fee_preview_says_waived_for_a_dust_fee_like_the_draft_it_creates(browser, owner, settings):
    body = {"network": "Mainnet", "currency": "BTC", "receiverAddress": ADDRESSES["Mainnet"], "pricing": "exact",
            "amount": "0.0001", "expiryHours": "24"}  # fmt: skip
    settings.FEE_DUST_WAIVERS_PER_DAY = 1

    preview = browser.get("/dashboard/drafts/fee-preview", body).json()["text"]
    browser.post("/dashboard/drafts/new", body)
    assert "waived" in preview and "separate output" not in preview
    assert Draft.objects.get(user=owner).fee_placement == "Waived"

    # Today's allowance is spent: the preview and the next draft both say the fee accrues.
    preview = browser.get("/dashboard/drafts/fee-preview", body | {"amount": "0.00010001"}).json()["text"]
    browser.post("/dashboard/drafts/new", body | {"amount": "0.00010001"})
    assert "accrued" in preview
    assert Draft.objects.filter(user=owner).order_by("-created_at").first().fee_placement == "Accrued"


# --- The default receiving address and the address book ------------------------------------


def test_an_empty_address_is_the_default_one_and_every_address_field_offers_the_book(browser, owner):
    browser.post("/dashboard/address-book/", {"label": "Till", "network": "Base", "address": ADDRESSES["Base"],
                                              "direction": "Receiving", "is_default": "on"})  # fmt: skip
    entry = AddressBookEntry.objects.get(user=owner)
    assert entry.is_default
    for path in ("/dashboard/drafts/new", "/dashboard/pay-links/new", "/dashboard/templates/"):
        page = browser.get(path).content.decode()
        assert 'list="receiving-addresses"' in page and f'<option value="{ADDRESSES["Base"]}"' in page, path

    browser.post("/dashboard/drafts/new", BASE_EXACT)
    assert Draft.objects.get(user=owner).receiver_address == ADDRESSES["Base"]

    browser.post(f"/dashboard/address-book/{entry.id}/default", {"clear": "1"})
    entry.refresh_from_db()
    assert not entry.is_default
    refused = browser.post("/dashboard/drafts/new", BASE_EXACT)
    assert "default receiving address" in refused.context["form"].errors["receiverAddress"][0]


def test_a_pay_link_option_may_leave_its_address_to_the_default(browser, owner):
    from paylinks.models import PaymentRequest

    entry = AddressBookEntry.objects.create(
        user=owner, network="Base", address=ADDRESSES["Base"], direction="Receiving", is_default=True
    )
    response = browser.post("/dashboard/pay-links/new", {"fiatCurrency": "jpy", "fiatAmount": "3500",
                                                         "option0_currency": "USDC", "option0_network": "Base",
                                                         "expiryHours": "72"})  # fmt: skip

    link = PaymentRequest.objects.get(user=owner)
    assert response.status_code == 302 and link.options[0]["receiverAddress"] == entry.address
    assert link.fiat_currency == "JPY"
    assert "¥3,500" in browser.get("/dashboard/pay-links/").content.decode()  # as the pay page shows it


# --- Pages ----------------------------------------------------------------------------------


def test_a_confirmed_draft_shows_its_transaction_instead_of_a_way_to_pay(browser, owner):
    tx = "0x" + "ab" * 32
    draft = make_draft(owner, status=DraftStatus.CONFIRMED, paid_tx_id=tx, paid_tx_ids=[tx],
                       confirmed_at=timezone.now(), payment_uri="ethereum:0xpay", confirmations=12)  # fmt: skip
    page = browser.get(f"/dashboard/drafts/{draft.id}/").content.decode()
    assert f'href="https://etherscan.io/tx/{tx}"' in page
    assert "Copy payment URI" not in page and 'class="qr"' not in page

    pending = make_draft(owner, payment_uri="ethereum:0xpay", amount_base_units=26_000_000)
    assert "Copy payment URI" in browser.get(f"/dashboard/drafts/{pending.id}/").content.decode()


def test_times_are_shown_in_the_accounts_zone_and_labelled(browser, owner, monkeypatch):
    draft = make_draft(owner)
    assert " UTC</a>" in browser.get("/dashboard/drafts/").content.decode()
    assert display_of(owner) == Display("USD", "UTC", "en")  # nothing set: the fallbacks

    monkeypatch.setattr("dashboard.security.display_of", lambda user: Display("JPY", "Asia/Tokyo", "en"))
    page = browser.get("/dashboard/drafts/").content.decode()
    local = timezone.localtime(draft.created_at, timezone.get_fixed_timezone(9 * 60))
    # Babel's time in the account's zone, the zone named by its id (English has no short name for it).
    assert formatting.moment(draft.created_at, "Asia/Tokyo", "en", skeleton=formatting.MINUTES) in page
    assert f"{local:%b} {local.day}, {local:%Y}, {local.hour % 12 or 12}:{local:%M}" in page
    assert "Asia/Tokyo</a>" in page
    assert "(JPY)" in browser.get("/dashboard/").content.decode()  # the overview in the display currency
    assert 'value="Asia/Tokyo"' in browser.get("/dashboard/templates/").content.decode()  # forms start there
    assert 'name="fiatCurrency" value="JPY"' in browser.get("/dashboard/drafts/new").content.decode()


def test_the_overview_can_be_shown_in_another_currency_through_its_control(browser):
    page = browser.get("/dashboard/", {"ccy": "eur"}).content.decode()
    assert "(EUR)" in page and 'name="ccy"' in page
    assert "(USD)" in browser.get("/dashboard/", {"ccy": "nonsense"}).content.decode()


@pytest.mark.parametrize("layout", [charts.WIDE, charts.NARROW])
@pytest.mark.parametrize("days", [7, 30, 90])
def test_the_charts_day_labels_never_overlap(layout, days):
    today = timezone.now().date()
    volume = charts.Volume(currency="USD", days=[today - timedelta(days=days - 1 - i) for i in range(days)], assets=[])
    svg = charts.volume_svg(volume, layout)
    xs = [float(x) for x in re.findall(r'<text x="([\d.]+)" y="\d+" text-anchor="middle">\w+ \d+<', svg)]
    width = charts.label_width(layout.font)
    assert len(xs) >= 2
    assert all(b - a >= width for a, b in zip(xs, xs[1:], strict=False))  # centred: one full width apart
    assert xs[0] - width / 2 >= 0 and xs[-1] + width / 2 <= layout.width  # inside the drawing


def test_the_phone_chart_keeps_its_text_at_eleven_pixels_or_more():
    drawn_width = 360 - 2 * 12  # the page's side padding at 360 px
    assert charts.NARROW.font * drawn_width / charts.NARROW.width >= 11


def test_the_settlement_form_starts_on_a_network_the_operator_takes(settings):
    settings.PLATFORM_FEE_ADDRESSES = {"Testnet": FEE_ADDRESSES["Testnet"]}  # Mainnet comes first otherwise
    form = SettleForm()
    html = str(form["network"]) + str(form["currency"])
    assert [value for value, _label in form.fields["network"].choices] == ["Testnet"]
    assert '<option value="Testnet" selected>' in html and '<option value="BTC" selected>' in html


# --- A pay link's superseded drafts ----------------------------------------------------------


def _link_and_switch(owner):
    from paylinks.services import checkout_select, payment_request_create

    link = payment_request_create(user=owner, fiat_currency="EUR", fiat_amount=Decimal(25), options=[
        {"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]},
        {"currency": "USDC", "network": "Ethereum", "receiverAddress": ADDRESSES["Ethereum"]},
    ])  # fmt: skip
    left = checkout_select(token=link.token, currency="USDC", network="Base")
    chosen = checkout_select(token=link.token, currency="USDC", network="Ethereum")
    return link, left, chosen


def test_a_drafts_the_payer_left_are_grouped_under_the_pay_link_not_in_the_list(browser, owner):
    link, left, chosen = _link_and_switch(owner)
    left.refresh_from_db()
    assert left.status == "Cancelled" and left.superseded_at is not None and chosen.superseded_at is None

    listing = browser.get("/dashboard/drafts/").content.decode()
    assert f"/dashboard/drafts/{chosen.id}/" in listing and f"/dashboard/drafts/{left.id}/" not in listing
    everything = browser.get("/dashboard/drafts/", {"superseded": "on"}).content.decode()
    assert f"/dashboard/drafts/{left.id}/" in everything
    detail = browser.get(f"/dashboard/pay-links/{link.id}/").content.decode()
    grouped = detail.split('<details class="superseded">')[1]
    assert f"/dashboard/drafts/{left.id}/" in grouped and f"/dashboard/drafts/{chosen.id}/" not in grouped


def test_quiet_pay_link_drafts_send_no_created_or_cancelled_events(browser, owner):
    _link_and_switch(owner)
    assert Event.objects.filter(type="draft.created").count() == 2  # the contract's default
    assert Event.objects.filter(type="draft.cancelled").count() == 1

    browser.post("/dashboard/pay-links/", {"quietCheckoutDrafts": "on"})
    Event.objects.all().delete()
    _, left, chosen = _link_and_switch(owner)

    assert not Event.objects.filter(type__in=["draft.created", "draft.cancelled"]).exists()
    left.refresh_from_db()
    assert left.superseded_at is not None and Draft.objects.filter(pk=chosen.pk, status="Pending").exists()


def test_a_recurring_draft_without_an_address_pays_the_default_at_each_run(browser, owner):
    from recurring.models import RecurringTemplate

    body = {"interval": "Daily", "timezone": "UTC", **BASE_EXACT}
    refused = browser.post("/dashboard/templates/", body)
    assert "default receiving address" in refused.context["form"].errors["receiverAddress"][0]

    AddressBookEntry.objects.create(
        user=owner, network="Base", address=ADDRESSES["Base"], direction="Receiving", is_default=True
    )
    browser.post("/dashboard/templates/", body)

    template = RecurringTemplate.objects.get(user=owner)
    assert "receiverAddress" not in template.draft  # resolved when each run makes its draft
    assert template.draft["amountSats"] == 12_500_000


def test_the_transfers_page_offers_only_attachable_drafts_with_their_amounts(browser, owner):
    from chainwatch.matching import match_network
    from chainwatch.models import ObservedTransfer, UnmatchedTransfer

    draft = make_draft(owner, amount_base_units=25_000_000, required_confirmations=1, memo="Invoice 9")
    ObservedTransfer.objects.create(network="Ethereum", txid="0xfar", index=0, currency="USDC",
                                    token_address="0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
                                    receiver_address=draft.receiver_address.lower(), amount_base_units=20_000_000,
                                    block_height=100, block_hash="0xb")  # fmt: skip
    match_network(network="Ethereum", head=200)
    assert UnmatchedTransfer.objects.get().candidate_draft_ids == [str(draft.id)]

    offered = browser.get("/dashboard/transfers/").content.decode()
    assert f"{short_id(draft.id)} · 25.000000 USDC · Pending · Invoice 9" in offered

    Draft.objects.filter(pk=draft.pk).update(status=DraftStatus.CONFIRMED)
    page = browser.get("/dashboard/transfers/").content.decode()
    assert "0xfar" in page and short_id(draft.id) not in page and "Attach to this draft" not in page


def test_another_account_cannot_touch_an_entrys_default(owner, other_account, client):
    entry = AddressBookEntry.objects.create(
        user=owner, network="Base", address=ADDRESSES["Base"], direction="Receiving"
    )
    stranger = Client()
    stranger.force_login(other_account)

    assert stranger.post(f"/dashboard/address-book/{entry.id}/default").status_code == 404
    assert client.post(f"/dashboard/address-book/{entry.id}/default").status_code == 302  # to sign-in
    entry.refresh_from_db()
    assert not entry.is_default


def test_a_sending_entry_is_not_made_the_default(browser, owner):
    entry = AddressBookEntry.objects.create(user=owner, network="Base", address=ADDRESSES["Base"], direction="Sending")

    response = browser.post(f"/dashboard/address-book/{entry.id}/default", follow=True)

    entry.refresh_from_db()
    assert not entry.is_default and "Only a Receiving address" in response.content.decode()


def test_the_overview_counts_days_in_the_accounts_zone(browser, owner, monkeypatch):
    from datetime import UTC, datetime

    from django.utils import timezone as dj_timezone

    confirmed = datetime.now(UTC).replace(hour=23, minute=30, second=0, microsecond=0) - timedelta(days=1)
    make_draft(owner, status=DraftStatus.CONFIRMED, confirmed_at=confirmed, usd_rate=1)
    monkeypatch.setattr("dashboard.security.display_of", lambda user: Display("USD", "Asia/Tokyo", "en"))

    page = browser.get("/dashboard/").content.decode()

    tokyo_day = dj_timezone.localtime(confirmed, ZoneInfo("Asia/Tokyo")).date()  # the next day in Tokyo
    assert f'<th scope="row">{tokyo_day:%b} {tokyo_day.day}, {tokyo_day:%Y}</th>' in page

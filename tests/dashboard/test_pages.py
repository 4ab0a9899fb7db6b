"""The merchant dashboard through the Django test client: every page for the owner, another
account and an anonymous visitor; actions call the same services as the API."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest
from django.test import Client, override_settings

from accounts.models import ApiKey
from drafts.enums import DraftStatus
from drafts.models import Draft
from payments import formatting
from tests.conftest import stepped_up
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import make_draft
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db
PAGES = ["/dashboard/", "/dashboard/drafts/", "/dashboard/drafts/new", "/dashboard/webhooks/",
         "/dashboard/api-keys/", "/dashboard/fees/", "/dashboard/pay-links/", "/dashboard/pay-links/new",
         "/dashboard/transfers/", "/dashboard/security/", "/dashboard/notifications/",
         "/dashboard/templates/", "/dashboard/address-book/", "/dashboard/receiving-wallets/",
         "/dashboard/profile/"]  # fmt: skip


@pytest.fixture(autouse=True)
def _operator():
    with override_settings(PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES, OUTBOUND_ALLOW_LOOPBACK=True):
        yield


@pytest.fixture
def browser(owner) -> Client:
    return stepped_up(Client(enforce_csrf_checks=False), owner)  # a recent second factor (accounts.stepup)


@pytest.fixture
def stranger(other_account) -> Client:
    client = Client()
    client.force_login(other_account)
    return client


def test_the_root_sends_a_visitor_to_sign_in_and_a_merchant_to_the_overview(client, browser, settings):
    assert client.get("/")["Location"].startswith(settings.LOGIN_URL)
    assert browser.get("/")["Location"] == "/dashboard/"


@pytest.mark.parametrize("path", PAGES)
def test_every_page_asks_a_visitor_to_sign_in(client, path, settings):
    response = client.get(path)
    assert response.status_code == 302 and response["Location"].startswith(settings.LOGIN_URL)


@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders_for_the_owner_with_strict_headers(browser, path):
    response = browser.get(path)
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert response["X-Frame-Options"] == "DENY"
    html = response.content.decode()
    assert "<script>" not in html and " style=" not in html and "onclick" not in html
    assert 'name="viewport"' in html and 'lang="' in html


def test_a_draft_created_in_the_form_shows_up_in_the_list_and_detail(browser, owner):
    body = {
        "network": "Base",
        "currency": "USDC",
        "receiverAddress": ADDRESSES["Base"],
        "pricing": "fiat",
        "fiatCurrency": "EUR",
        "fiatAmount": "49.90",
        "memo": "Invoice 7",
        "expiryHours": "24",
    }
    preview = browser.post("/dashboard/drafts/new", {**body, "preview": "1"})
    assert preview.status_code == 200 and "Fee:" in preview.content.decode() and not Draft.objects.exists()
    created = browser.post("/dashboard/drafts/new", body)
    draft = Draft.objects.get(user=owner)
    assert created.status_code == 302 and created["Location"] == f"/dashboard/drafts/{draft.id}/"
    assert draft.fiat_currency == "EUR" and draft.origin == "Api"
    listing = browser.get("/dashboard/drafts/?q=Invoice").content.decode()
    assert str(draft.id) in listing
    detail = browser.get(f"/dashboard/drafts/{draft.id}/").content.decode()
    assert draft.receiver_address in detail and "<svg" in detail and "draft.created" in detail


def test_a_domain_error_is_shown_next_to_its_field(browser):
    body = {"network": "Base", "currency": "USDC", "receiverAddress": "not-an-address", "pricing": "exact",
            "amount": "0.001", "expiryHours": "24"}  # fmt: skip
    response = browser.post("/dashboard/drafts/new", body)
    assert response.status_code == 200
    form = response.context["form"]
    assert form.errors["receiverAddress"] and not Draft.objects.exists()


def test_the_live_fee_preview_prices_with_the_same_calculator(browser):
    query = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "pricing": "exact",
             "amount": "25", "expiryHours": "24"}  # fmt: skip
    text = browser.get("/dashboard/drafts/fee-preview", query).json()["text"]
    assert "25.000000 USDC." in text and "base units" not in text and "0.39%" in text


def test_the_csv_export_follows_the_filters_and_neutralises_formulas(browser, owner):
    make_draft(owner, memo="=HYPERLINK(1)")
    make_draft(owner, amount_base_units=30_000_000, status=DraftStatus.CANCELLED)
    response = browser.get("/dashboard/drafts/?status=Pending&format=csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert response["Content-Type"].startswith("text/csv") and len(rows) == 1
    assert rows[0]["memo"] == "'=HYPERLINK(1)" and rows[0]["amount"] == "25.000000"


def test_the_csv_gives_times_in_the_accounts_time_zone_beside_utc(browser, owner):
    from datetime import UTC, datetime

    from accounts.profiles import merchant_profile_update

    merchant_profile_update(user=owner, changes={"time_zone": "Asia/Tokyo"})
    draft = make_draft(owner)
    Draft.objects.filter(pk=draft.pk).update(created_at=datetime(2026, 11, 25, 20, 27, 39, tzinfo=UTC))
    exported = browser.get("/dashboard/drafts/?format=csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert rows[0]["createdAt"] == "2026-11-25T20:27:39Z"
    assert rows[0]["createdAtLocal"] == "2026-11-26T05:27:39+09:00"


def test_cancel_from_the_detail_page_asks_first_then_goes_through_the_state_machine(browser, owner):
    draft = make_draft(owner)
    asked = browser.post(f"/dashboard/drafts/{draft.id}/cancel")
    draft.refresh_from_db()
    assert asked.status_code == 200 and "Cancel this draft?" in asked.content.decode()
    assert draft.status == DraftStatus.PENDING
    response = browser.post(f"/dashboard/drafts/{draft.id}/cancel", {"confirmed": "yes"})
    draft.refresh_from_db()
    assert response.status_code == 302 and draft.status == DraftStatus.CANCELLED
    again = browser.post(f"/dashboard/drafts/{draft.id}/cancel", {"confirmed": "yes"}, follow=True)
    assert "cannot be cancelled" in again.content.decode()


def test_another_account_sees_none_of_my_drafts_webhooks_or_keys(browser, stranger, owner):
    draft = make_draft(owner)
    browser.post("/dashboard/webhooks/", {"url": "http://127.0.0.1:9/hook"})
    webhook = Webhook.objects.get(user=owner)
    stepped_up(browser)
    browser.post("/dashboard/api-keys/", {"name": "ci", "scopes": ["drafts:read"]})
    key = ApiKey.objects.get(user=owner)
    for path in (
        f"/dashboard/drafts/{draft.id}/",
        f"/dashboard/drafts/{draft.id}/pdf",
        f"/dashboard/webhooks/{webhook.id}/",
    ):
        assert stranger.get(path).status_code == 404
    assert stranger.post(f"/dashboard/drafts/{draft.id}/cancel").status_code == 404
    assert stranger.post(f"/dashboard/api-keys/{key.id}/revoke").status_code == 404
    listing = stranger.get("/dashboard/drafts/").content.decode()
    assert str(draft.id) not in listing
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING


def test_a_webhook_secret_and_an_api_key_are_shown_once(browser, owner):
    created = browser.post("/dashboard/webhooks/", {"url": "http://127.0.0.1:9/hook"}).content.decode()
    webhook = Webhook.objects.get(user=owner)
    assert webhook.secret in created
    assert webhook.secret not in browser.get("/dashboard/webhooks/").content.decode()
    assert webhook.secret not in browser.get(f"/dashboard/webhooks/{webhook.id}/").content.decode()
    stepped_up(browser)
    issued = browser.post("/dashboard/api-keys/", {"name": "ci", "scopes": ["drafts:read"]}).content.decode()
    key = ApiKey.objects.get(user=owner)
    assert f"{key.prefix}" in issued and "pdk_" in issued
    assert "pdk_" not in browser.get("/dashboard/api-keys/").content.decode().replace(key.prefix, "")
    browser.post(f"/dashboard/api-keys/{key.id}/revoke")
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_forms_need_a_csrf_token(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post("/dashboard/api-keys/", {"name": "x", "scopes": ["drafts:read"]}).status_code == 403
    assert not ApiKey.objects.exists()


def test_the_overview_charts_confirmed_volume_without_relying_on_colour(browser, owner):
    from django.utils import timezone

    make_draft(owner, status=DraftStatus.CONFIRMED, confirmed_at=timezone.now(), usd_rate=1)
    html = browser.get("/dashboard/").content.decode()
    assert '<svg viewBox="0 0 640 220" role="img"' in html and "url(#chart-wide-solid)" in html
    assert '<svg viewBox="0 0 340 200" role="img"' in html and "url(#chart-narrow-solid)" in html
    assert "25.00" in html  # the table beside the chart carries the figures


def test_the_overview_volume_leaves_out_what_the_merchant_paid_out(owner):
    from django.utils import timezone

    from dashboard.charts import confirmed_volume
    from drafts.requests import OriginKind

    now = timezone.now()
    make_draft(owner, status=DraftStatus.CONFIRMED, confirmed_at=now, usd_rate=1)
    for origin in (OriginKind.REFUND, OriginKind.SETTLEMENT):  # a refund's payout, a fee settlement
        make_draft(owner, status=DraftStatus.CONFIRMED, confirmed_at=now, usd_rate=1, origin=origin)
    volume = confirmed_volume(user=owner, days=30, display_currency="USD")
    assert sum(total for _, _, total in volume.rows) == 25


PAY_LINK = {
    "fiatCurrency": "EUR",
    "fiatAmount": "35.00",
    "option0_currency": "USDC",
    "option0_network": "Ethereum",
    "option0_receiverAddress": ADDRESSES["Ethereum"],
    "option1_currency": "BTC",
    "option1_network": "Mainnet",
    "option1_receiverAddress": ADDRESSES["Mainnet"],
    "orderId": "A-100",
    "expiryHours": "72",
}


def test_a_pay_link_takes_a_return_link_and_refuses_one_that_is_not_https(browser, owner):
    from paylinks.models import PaymentRequest

    refused = browser.post("/dashboard/pay-links/new", PAY_LINK | {"returnUrl": "http://shop.example/thanks"})
    assert refused.status_code == 200 and not PaymentRequest.objects.exists()
    assert "https" in refused.content.decode()
    made = browser.post("/dashboard/pay-links/new", PAY_LINK | {"returnUrl": "https://shop.example/thanks"})
    assert made.status_code == 302
    assert PaymentRequest.objects.get(user=owner).return_url == "https://shop.example/thanks"


def test_a_pay_link_is_created_with_its_options_and_can_be_cancelled(browser, owner):
    from paylinks.models import PaymentRequest

    response = browser.post("/dashboard/pay-links/new", PAY_LINK)
    created = PaymentRequest.objects.get(user=owner)
    assert response.status_code == 302 and response["Location"] == f"/dashboard/pay-links/{created.id}/"
    assert [o["currency"] for o in created.options] == ["USDC", "BTC"] and created.order_id == "A-100"
    detail = browser.get(f"/dashboard/pay-links/{created.id}/").content.decode()
    assert f"/pay/{created.token}" in detail and "<svg" in detail
    assert "A-100" in browser.get("/dashboard/pay-links/").content.decode()
    browser.post(f"/dashboard/pay-links/{created.id}/cancel")
    created.refresh_from_db()
    assert created.status == "Cancelled"


def test_a_bad_option_address_is_shown_next_to_that_option(browser):
    from paylinks.models import PaymentRequest

    response = browser.post("/dashboard/pay-links/new", {**PAY_LINK, "option1_receiverAddress": "tb1-nonsense"})
    assert response.status_code == 200
    assert response.context["form"].errors["option1_receiverAddress"]
    assert not PaymentRequest.objects.exists()


def test_another_account_cannot_see_or_cancel_my_pay_link(browser, stranger, owner):
    from paylinks.models import PaymentRequest

    browser.post("/dashboard/pay-links/new", PAY_LINK)
    created = PaymentRequest.objects.get(user=owner)
    assert stranger.get(f"/dashboard/pay-links/{created.id}/").status_code == 404
    assert stranger.post(f"/dashboard/pay-links/{created.id}/cancel").status_code == 404
    assert created.token not in stranger.get("/dashboard/pay-links/").content.decode()


def test_the_authenticator_app_is_set_up_and_turned_on_from_the_security_page(browser, owner):
    from django_otp.oath import totp

    from accounts.models import TotpDevice

    setup = browser.post("/dashboard/security/", {"action": "totp_setup"}).content.decode()
    assert "<svg" in setup
    device = TotpDevice.objects.get(user=owner)
    code = f"{totp(device.bin_key, step=device.step, t0=device.t0, digits=device.digits):06d}"
    enabled = browser.post("/dashboard/security/", {"action": "totp_enable", "code": code}).content.decode()
    assert 'id="recovery-codes"' in enabled
    device.refresh_from_db()
    assert device.confirmed


def test_the_password_change_needs_the_current_password(browser, owner):
    change = {"action": "password", "newPassword": "violet-harbor-42-lantern"}
    wrong = browser.post("/dashboard/security/", {**change, "currentPassword": "nope"})
    assert wrong.context["password_form"].errors["currentPassword"]
    right = browser.post("/dashboard/security/", {**change, "currentPassword": "correct horse battery staple"})
    owner.refresh_from_db()
    assert right.status_code == 302 and owner.check_password("violet-harbor-42-lantern")


def test_email_notifications_can_be_turned_off(browser, owner):
    from notifications.selectors import notification_email_enabled

    browser.post("/dashboard/notifications/", {})
    assert notification_email_enabled(user=owner) is False
    browser.post("/dashboard/notifications/", {"emailEnabled": "on"})
    assert notification_email_enabled(user=owner) is True


def test_an_unmatched_transfer_is_listed_and_attached_from_the_page(browser, owner):
    from chainwatch.matching import match_network
    from chainwatch.models import ObservedTransfer, UnmatchedTransfer

    draft = make_draft(owner, amount_base_units=25_000_000, required_confirmations=1)
    ObservedTransfer.objects.create(network="Ethereum", txid="0xfar", index=0, currency="USDC",
                                    token_address="0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
                                    receiver_address=draft.receiver_address.lower(), amount_base_units=20_000_000,
                                    block_height=100, block_hash="0xb")  # fmt: skip
    match_network(network="Ethereum", head=200)
    report = UnmatchedTransfer.objects.get()
    page = browser.get("/dashboard/transfers/").content.decode()
    assert "0xfar" in page and "20.000000\u00a0USDC" in page
    prefix = str(report.id)
    refused = browser.post(
        f"/dashboard/transfers/{report.id}/attach", {f"{prefix}-draftId": str(draft.id)}, follow=True
    )
    assert "10%" in refused.content.decode()
    browser.post(
        f"/dashboard/transfers/{report.id}/attach", {f"{prefix}-draftId": str(draft.id), f"{prefix}-acceptAmount": "on"}
    )
    draft.refresh_from_db()
    assert draft.status in (DraftStatus.SEEN, DraftStatus.CONFIRMED) and draft.received_base_units == 20_000_000


def test_rotating_a_webhook_secret_shows_the_new_one_once_and_keeps_the_old_signing(browser, owner):
    browser.post("/dashboard/webhooks/", {"url": "http://127.0.0.1:9/hook"})
    webhook = Webhook.objects.get(user=owner)
    old = webhook.secret
    page = browser.post(f"/dashboard/webhooks/{webhook.id}/rotate").content.decode()
    webhook.refresh_from_db()
    assert webhook.secret != old and webhook.secret in page and webhook.previous_secret == old
    assert webhook.secret not in browser.get(f"/dashboard/webhooks/{webhook.id}/").content.decode()


def test_a_recurring_template_is_created_paused_resumed_and_deleted(browser, owner):
    from recurring.models import RecurringTemplate

    body = {"name": "Rent", "interval": "Monthly", "timezone": "Europe/Stockholm", "network": "Base",
            "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "pricing": "fiat", "fiatCurrency": "EUR",
            "fiatAmount": "900", "expiryHours": "72", "firstRunAt": "2031-01-31T09:00"}  # fmt: skip
    response = browser.post("/dashboard/templates/", body)
    assert response.status_code == 302, response.context["form"].errors if response.context else ""
    template = RecurringTemplate.objects.get(user=owner)
    assert template.interval == "Monthly" and template.time_zone == "Europe/Stockholm"
    page = browser.get("/dashboard/templates/").content.decode()
    # UTC times of 09:00 Stockholm, clamped to the month's end, as the account reads them (Babel).
    first, second = (datetime(2031, month, day, 8, 0, tzinfo=UTC) for month, day in ((1, 31), (2, 28)))
    assert "Jan 31, 2031, 8:00" in page and "Feb 28, 2031, 8:00" in page
    assert formatting.local_moment(first) in page and formatting.local_moment(second) in page
    browser.post(f"/dashboard/templates/{template.id}/pause")
    template.refresh_from_db()
    assert template.paused
    browser.post(f"/dashboard/templates/{template.id}/resume")
    browser.post(f"/dashboard/templates/{template.id}/delete")
    assert not RecurringTemplate.objects.exists()


def test_a_bad_template_address_is_shown_next_to_its_field(browser):
    body = {"interval": "Daily", "timezone": "UTC", "network": "Base", "currency": "USDC",
            "receiverAddress": "nope", "pricing": "exact", "amount": "0.001", "expiryHours": "12"}  # fmt: skip
    response = browser.post("/dashboard/templates/", body)
    assert response.status_code == 200 and response.context["form"].errors["receiverAddress"]


def test_address_book_entries_are_added_checked_and_removed(browser, stranger, owner):
    from addressbook.models import AddressBookEntry

    bad = browser.post("/dashboard/address-book/", {"network": "Base", "address": "nope", "direction": "Receiving"})
    assert bad.context["form"].errors["address"]
    browser.post("/dashboard/address-book/", {"label": "Shop", "network": "Base", "address": ADDRESSES["Base"],
                                              "direction": "Receiving"})  # fmt: skip
    entry = AddressBookEntry.objects.get(user=owner)
    assert "Shop" in browser.get("/dashboard/address-book/").content.decode()
    assert stranger.post(f"/dashboard/address-book/{entry.id}/delete").status_code == 404
    browser.post(f"/dashboard/address-book/{entry.id}/delete")
    assert not AddressBookEntry.objects.exists()


def test_a_receiving_wallet_is_added_shown_with_its_addresses_and_archived(browser, stranger, owner):
    from wallets.models import ReceivingWallet

    tpub = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4"
    tpub += "LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"
    browser.post("/dashboard/mode", {"testMode": "on"})
    added = browser.post(
        "/dashboard/receiving-wallets/",
        {"label": "Till", "network": "Testnet", "descriptor": f"wpkh([73c5da0a/84h/1h/0h]{tpub}/0/*)"},
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    page = browser.get("/dashboard/receiving-wallets/").content.decode()
    assert "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl" in page and "tb1qd7spv5q28348xl4myc8zmh983w5jx32cjhkn97" in page
    wallet = ReceivingWallet.objects.get(user=owner)
    assert stranger.post(f"/dashboard/receiving-wallets/{wallet.id}/archive").status_code == 404
    browser.post(f"/dashboard/receiving-wallets/{wallet.id}/archive")
    wallet.refresh_from_db()
    assert wallet.archived_at is not None


def test_a_private_key_in_the_wallet_form_is_refused_and_not_rendered_back(browser):
    from embit import bip39
    from embit.bip32 import HDKey

    from wallets.models import ReceivingWallet

    tprv = HDKey.from_seed(bip39.mnemonic_to_seed("abandon " * 11 + "about")).derive("m/84h/1h/0h").to_base58()
    browser.post("/dashboard/mode", {"testMode": "on"})
    for field in ("descriptor", "label", "network"):
        body = {"network": "Testnet", "descriptor": "x", field: f"wpkh({tprv}/0/*)"}
        page = browser.post("/dashboard/receiving-wallets/", body)
        assert page.status_code == 200
        html = page.content.decode()
        assert "private key" in html and tprv not in html
    assert not ReceivingWallet.objects.exists()


def test_a_lightning_payment_shows_settled_and_a_reverted_payment_says_when_and_which(browser, owner):
    from drafts.services import PaymentObservation, draft_payment_apply

    invoice = make_draft(
        owner, network="Mainnet", currency="BTC", method="Lightning", amount_base_units=5_000, payment_hash="ab" * 32
    )
    draft_payment_apply(
        draft_id=invoice.id, observation=PaymentObservation(tx_id="ab" * 32, received_base_units=5_000, final=True)
    )
    page = browser.get(f"/dashboard/drafts/{invoice.id}/").content.decode()
    assert "Settled" in page and "confirmations" not in page.lower().split('id="payment-depth"')[1][:80]

    onchain = make_draft(owner)
    seen = PaymentObservation(tx_id="0x" + "cd" * 32, received_base_units=25_000_000, confirmations=12)
    draft_payment_apply(draft_id=onchain.id, observation=seen)
    onchain.refresh_from_db()
    assert onchain.status == DraftStatus.CONFIRMED and onchain.finalized_at is None  # watched to 64 blocks
    draft_payment_apply(draft_id=onchain.id, observation=PaymentObservation(**{**seen.__dict__, "vanished": True}))
    page = browser.get(f"/dashboard/drafts/{onchain.id}/").content.decode()
    assert 'id="payment-reverted"' in page and "0x" + "cd" * 32 in page

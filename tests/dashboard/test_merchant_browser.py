"""The merchant's pages in a real browser (Debian's chromium through playwright) at 360 and
1280 px: the overview chart readable on a phone, the API-keys page intact, a paid draft showing
its transaction, the draft form's lists following the network with Lightning fields appearing,
the address book's default, a pay link's left drafts grouped. Every page is checked with
axe-core and for horizontal overflow; screenshots go to var/screenshots/merchant/."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import override_settings
from django.utils import timezone

from accounts.services import api_key_create
from addressbook.models import AddressBookEntry
from drafts.enums import DraftStatus
from tests.dashboard.test_browser import (
    SHOTS,
    _axe_serious,
    _no_horizontal_overflow,
    _signed_in_context,
)
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import make_draft

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


def _chart_labels(page) -> list[dict]:
    """The visible chart's day labels as drawn on screen (position and height in CSS px)."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('.chart svg'))
             .filter(svg => svg.getBoundingClientRect().width > 0)
             .flatMap(svg => Array.from(svg.querySelectorAll('text')))
             .filter(t => /^[A-Za-z]{3,} \\d{1,2}$/.test(t.textContent))  // "Nov 29", as Babel writes it in English
             .map(t => { const r = t.getBoundingClientRect();
                         return {left: r.left, right: r.right, height: r.height,
                                 font: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a}; })"""
    )


def _seed(owner):
    now = timezone.now()
    for days, amount in [(1, 25_000_000), (3, 40_000_000), (10, 15_000_000), (20, 60_000_000)]:
        make_draft(owner, status=DraftStatus.CONFIRMED, confirmed_at=now - timedelta(days=days), usd_rate=1,
                   amount_base_units=amount, created_at=now - timedelta(days=days))  # fmt: skip
    tx = "0x" + "cd" * 32
    paid = make_draft(owner, status=DraftStatus.CONFIRMED, paid_tx_id=tx, paid_tx_ids=[tx], confirmed_at=now,
                      usd_rate=1, payment_uri="ethereum:0xpay", confirmations=12, fiat_currency="JPY",
                      fiat_amount=3500, amount_base_units=23_000_000)  # fmt: skip
    for name in ("Shop till", "Accounting export with a long name"):
        api_key_create(user=owner, name=name, scopes=["drafts:read", "drafts:write", "webhooks:manage"])
    AddressBookEntry.objects.create(user=owner, label="Till", network="Base", address=ADDRESSES["Base"],
                                    direction="Receiving", is_default=True)  # fmt: skip
    from paylinks.services import checkout_select, payment_request_create

    link = payment_request_create(user=owner, fiat_currency="EUR", fiat_amount=Decimal(25), options=[
        {"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]},
        {"currency": "USDC", "network": "Ethereum", "receiverAddress": ADDRESSES["Ethereum"]},
    ])  # fmt: skip
    checkout_select(token=link.token, currency="USDC", network="Base")
    checkout_select(token=link.token, currency="USDC", network="Ethereum")
    return paid, link


@pytest.mark.parametrize(("width", "height", "name"), [(360, 780, "phone"), (1280, 860, "desktop")])
def test_the_merchant_pages_hold_up_at_phone_and_desktop_widths(chromium, live_server, owner, width, height, name):  # noqa: F811
    shots = SHOTS / "merchant"
    shots.mkdir(parents=True, exist_ok=True)
    with override_settings(PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES, OUTBOUND_ALLOW_LOOPBACK=True):
        paid, link = _seed(owner)
        context = _signed_in_context(chromium, live_server, owner, width, height)
        page = context.new_page()
        problems: list[str] = []

        def visit(path: str, shot: str) -> None:
            response = page.goto(f"{live_server.url}{path}")
            assert response.status == 200, path
            problems.extend(f"{path}: {p}" for p in _axe_serious(page))
            assert _no_horizontal_overflow(page), path
            page.screenshot(path=str(shots / f"{shot}-{name}.png"), full_page=True)

        visit("/dashboard/", "overview")
        labels = _chart_labels(page)
        assert len(labels) >= 3
        assert all(label["font"] >= 11 for label in labels), labels
        ordered = sorted(labels, key=lambda label: label["left"])
        assert all(a["right"] <= b["left"] for a, b in zip(ordered, ordered[1:], strict=False)), ordered

        visit("/dashboard/api-keys/", "api-keys")
        revoke = page.get_by_role("button", name="Revoke Accounting export with a long name")
        box = revoke.bounding_box()
        assert box and box["x"] + box["width"] <= width, box  # not cut off
        lines = page.locator("tbody .mono:visible").first.evaluate(
            "el => { const r = document.createRange(); r.selectNodeContents(el); return r.getClientRects().length; }"
        )
        assert lines == 1  # the key's prefix on one line, not a character per line

        visit(f"/dashboard/drafts/{paid.id}/", "draft-confirmed")
        assert page.locator("#payment-txs a").first.get_attribute("href").startswith("https://etherscan.io/tx/")
        assert page.locator(".qr").count() == 0 and page.get_by_text("Copy payment URI").count() == 0
        assert page.get_by_text("¥3,500").is_visible()

        visit("/dashboard/drafts/new", "draft-new")
        assert page.get_by_role("button", name="Update choices").is_hidden()  # JS filters live
        page.get_by_label("Network").select_option("Solana")
        assert page.locator("#id_currency option[value=ETH]").is_disabled()
        assert not page.locator("#id_currency option[value=SOL]").is_disabled()
        page.get_by_label("Network").select_option("Mainnet")
        page.get_by_label("Currency", exact=True).select_option("BTC")
        assert page.locator("#lightning-fields").is_hidden()
        page.get_by_label("Method").select_option("Lightning")
        assert page.get_by_label("Lightning invoice (BOLT11)").is_visible()
        assert page.get_by_label("Receiving address").is_hidden()
        problems.extend(f"draft-new lightning: {p}" for p in _axe_serious(page))
        page.screenshot(path=str(shots / f"draft-new-lightning-{name}.png"), full_page=True)
        page.get_by_label("Method").select_option("")
        assert page.locator("#lightning-fields").is_hidden()
        page.get_by_label("Exact amount of the asset").check()
        assert page.get_by_label("Fiat amount", exact=True).is_hidden()
        page.get_by_label("Receiving address").fill(ADDRESSES["Mainnet"])
        page.get_by_label("Amount of the asset", exact=True).fill("0.0001")
        preview = page.locator("#fee-preview")
        preview.filter(has_text="0.00010000 BTC").wait_for(timeout=20000)  # the live preview, by app.js
        assert "sats" not in preview.inner_text()  # asset units, never base units, on the dashboard
        assert "waived" in preview.inner_text()  # a dust fee, as the draft will record it
        page.screenshot(path=str(shots / f"draft-new-exact-{name}.png"), full_page=True)

        visit("/dashboard/address-book/", "address-book")
        assert page.get_by_role("button", name="Not default: Till").is_visible()
        visit(f"/dashboard/pay-links/{link.id}/", "pay-link")
        page.locator("details.superseded summary").click()
        visit("/dashboard/pay-links/", "pay-links")
        visit("/dashboard/drafts/", "drafts")
        visit("/dashboard/fees/", "fees")
        visit("/dashboard/transfers/", "transfers")
        visit("/dashboard/templates/", "templates")
        visit("/dashboard/pay-links/new", "pay-link-new")
        context.close()
    assert problems == []

"""The merchant's refund pages: issue from a Confirmed draft, errors next to their fields,
approve into the payment to make, cancel; and the same pages in Chromium at 360 and 1280 px
with axe-core (screenshots in var/screenshots/refunds/)."""

from __future__ import annotations

from html import escape
from pathlib import Path

import pytest
from django.test import Client

from drafts.models import Draft
from payments import formatting
from refunds.models import Refund
from refunds.services import refund_claim
from tests.dashboard.test_browser import _axe_serious, _no_horizontal_overflow, _signed_in_context
from tests.drafts.conftest import ADDRESSES
from tests.refunds.conftest import CUSTOMER

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "screenshots" / "refunds"


@pytest.fixture
def merchant(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def new_refund(merchant: Client, draft: Draft, **fields):
    body = {"kind": "full", "currency": draft.currency, "network": draft.network, "expiryHours": 336, **fields}
    return merchant.post(f"/dashboard/drafts/{draft.id}/refund", body)


@pytest.mark.django_db
def test_a_merchant_issues_approves_and_sees_the_payment_to_make(merchant, paid_draft):
    draft = paid_draft(network="Mainnet", currency="BTC", receiverAddress=ADDRESSES["Mainnet"], amountSats=150_000)
    assert "Issue a refund" in merchant.get(f"/dashboard/drafts/{draft.id}/").content.decode()
    issued = new_refund(merchant, draft, kind="exact", amount="0.0005", reason="One item returned")
    assert issued.status_code == 302, issued.content.decode()[:2000]
    refund = Refund.objects.get()
    assert (refund.amount_base_units, refund.reason) == (50_000, "One item returned")  # asset units in, base units kept
    page = merchant.get(issued["Location"]).content.decode()
    assert "/refund/" + refund.token in page and "Approve" not in page

    refund_claim(token=refund.token, refund_address=CUSTOMER["Mainnet"])
    assert "Approve and get the payment" in merchant.get(issued["Location"]).content.decode()
    approved = merchant.post(f"/dashboard/refunds/{refund.id}/approve")
    assert approved.status_code == 302
    page = merchant.get(issued["Location"]).content.decode()
    refund.refresh_from_db()
    assert refund.status == "Approved"
    assert escape(refund.payout_draft.payment_uri) in page and "Download tx template" in page and "<svg" in page
    payout_page = merchant.get(f"/dashboard/drafts/{refund.payout_draft_id}/").content.decode()
    assert f"/dashboard/refunds/{refund.id}/" in payout_page and "Issue a refund" not in payout_page
    template = merchant.get(f"/dashboard/drafts/{refund.payout_draft_id}/tx-template.json")
    assert template.status_code == 200 and CUSTOMER["Mainnet"] in template.content.decode()


@pytest.mark.django_db
def test_the_form_puts_the_services_problems_next_to_their_fields(merchant, paid_draft):
    draft = paid_draft()
    too_much = new_refund(merchant, draft, kind="exact", amount="30")
    assert too_much.status_code == 200
    assert "only 25000000 are left to refund" in too_much.content.decode()
    too_fine = new_refund(merchant, draft, kind="exact", amount="0.0000001")
    assert "more precise" in too_fine.content.decode()
    wrong_pair = new_refund(merchant, draft, kind="full", currency="ETH", network="Mainnet")
    assert "not supported on Mainnet" in wrong_pair.content.decode()
    assert Refund.objects.count() == 0


@pytest.mark.django_db
def test_cancel_and_other_accounts(merchant, paid_draft, other_account):
    draft = paid_draft()
    new_refund(merchant, draft)
    refund = Refund.objects.get()
    stranger = Client()
    stranger.force_login(other_account)
    assert stranger.get(f"/dashboard/refunds/{refund.id}/").status_code == 404
    assert stranger.post(f"/dashboard/refunds/{refund.id}/cancel").status_code == 404
    assert stranger.get(f"/dashboard/drafts/{draft.id}/refund").status_code == 404
    assert merchant.post(f"/dashboard/refunds/{refund.id}/cancel").status_code == 302
    assert Refund.objects.get().status == "Cancelled"
    assert "Cancelled" in merchant.get("/dashboard/refunds/?status=Cancelled").content.decode()
    assert Client().get("/dashboard/refunds/").status_code == 302  # sign in first


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(240)
@pytest.mark.parametrize(("width", "height", "name"), [(360, 780, "phone"), (1280, 860, "desktop")])
def test_the_refund_pages_in_the_browser(chromium, live_server, owner, paid_draft, settings, width, height, name):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    settings.BASE_URL = live_server.url
    draft = paid_draft(network="Mainnet", currency="BTC", receiverAddress=ADDRESSES["Mainnet"], amountSats=150_000)
    page = _signed_in_context(chromium, live_server, owner, width, height).new_page()
    problems: list[str] = []

    def check(shot: str) -> None:
        page.screenshot(path=str(SHOTS / f"dashboard-{shot}-{name}.png"), full_page=True)
        problems.extend(f"{shot}: {p}" for p in _axe_serious(page))
        assert _no_horizontal_overflow(page), shot

    response = page.goto(f"{live_server.url}/dashboard/drafts/{draft.id}/refund")
    assert response.status == 200 and "default-src 'none'" in response.headers["content-security-policy"]
    page.get_by_label("An exact amount of the asset").check()
    page.get_by_label("Amount of the asset", exact=True).fill("0.001")
    page.get_by_label("Reason (the customer sees it)").fill("Wrong size")
    check("refund-new")
    page.get_by_role("button", name="Issue refund").click()
    page.wait_for_url("**/dashboard/refunds/*/")
    assert page.locator("#claim-url").inner_text().startswith(live_server.url + "/refund/")
    check("refund-claimable")

    refund = Refund.objects.get()
    refund_claim(token=refund.token, refund_address=CUSTOMER["Mainnet"])
    page.reload()
    page.get_by_role("button", name="Approve and get the payment").click()
    page.wait_for_load_state()
    assert page.locator("#payout-uri").inner_text() == f"bitcoin:{CUSTOMER['Mainnet']}?amount=0.001&message=Refund"
    assert page.locator(".qr svg").is_visible()
    check("refund-approved")

    page.goto(f"{live_server.url}/dashboard/refunds/")
    assert page.get_by_role(
        "link", name=formatting.moment(refund.created_at, "UTC", "en", skeleton=formatting.MINUTES)
    ).is_visible()
    check("refunds-list")
    assert problems == []

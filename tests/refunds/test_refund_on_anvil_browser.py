"""A refund end to end in a real browser and on a real chain (anvil as Ethereum): a customer
paid 25 USDC, the merchant issues a full refund, the customer claims it on the hosted page
(phone and desktop), the merchant approves it and pays the payout from their own wallet,
and the watcher confirms it: the refund becomes Paid and the page shows the transaction.
Screenshots of every state go to var/screenshots/refunds/."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from drafts.models import Draft
from refunds.models import Refund
from tests.browser import AXE, CHROMIUM, axe_serious
from tests.chainwatch.conftest import anvil_factory, ethereum  # noqa: F401 - anvil as Ethereum
from tests.drafts.conftest import ADDRESSES
from tests.paylinks.test_pay_page_browser import (  # noqa: F401 - the pay page's fixtures
    DESKTOP,
    PHONE,
    browser_env,
    watch_ethereum,
)

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "var" / "screenshots" / "refunds"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]


def shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def pay_and_confirm(ethereum, to: str, amount: int) -> None:  # noqa: F811
    """A token transfer mined, seen by a watcher pass, then buried under 12 more blocks."""
    ethereum.pay_token(ethereum.token, to, amount)
    ethereum.mine(1)
    watch_ethereum()
    ethereum.mine(12)
    watch_ethereum()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_refund_is_claimed_on_the_page_approved_and_paid_on_anvil(
    browser_env,  # noqa: F811
    chromium,
    api_client,
    ethereum,  # noqa: F811
    viewport,
):
    width = "phone" if viewport == PHONE else "desktop"
    merchant, customer = ethereum.new_address(), ethereum.new_address()
    watch_ethereum()  # the watcher runs before any payment, as in production
    body = {"network": "Ethereum", "currency": "USDC", "receiverAddress": merchant, "amountSats": 25_000_000}
    paid = api_client.post("/api/v1/drafts", body, format="json").json()
    pay_and_confirm(ethereum, merchant, 25_000_000)  # the customer's payment
    assert Draft.objects.get(pk=paid["id"]).status == "Confirmed"

    issued = api_client.post(
        "/api/v1/refunds", {"draftId": paid["id"], "full": True, "reason": "Order cancelled"}, format="json"
    )
    assert issued.status_code == 201, issued.json()
    refund = issued.json()
    url = f"{browser_env.url}/refund/{refund['claimUrl'].rsplit('/', 1)[1]}"

    page = chromium.new_page(viewport=viewport, device_scale_factor=2 if viewport == PHONE else 1)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    # axe-core is injected into a second page that bypasses the CSP; the page itself keeps it.
    audit = chromium.new_context(viewport=viewport, bypass_csp=True).new_page()

    def audited(name: str) -> None:
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], name  # no sideways scroll
        shot(page, f"{width}-{name}")
        audit.goto(page.url)
        assert axe_serious(audit) == [], name

    page.goto(url)
    expect(page.get_by_role("heading", name="25.000000 USDC")).to_be_visible()
    expect(page.get_by_text("Tell us where to send your refund.")).to_be_visible()
    expect(page.get_by_text("Order cancelled")).to_be_visible()
    audited("1-claimable")

    field = page.get_by_label("Your USDC address on Ethereum")
    field.fill(ADDRESSES["Mainnet"])  # a Bitcoin address: refused, next to the field
    page.get_by_role("button", name="Claim refund").click()
    expect(page.locator("#refund-address-error")).to_be_visible()
    expect(field).to_have_attribute("aria-invalid", "true")
    assert Refund.objects.get().status == "Claimable"
    audit_url = page.url
    shot(page, f"{width}-2-wrong-network")
    audit.goto(audit_url)
    assert axe_serious(audit) == []

    field.fill(customer.lower())
    page.get_by_role("button", name="Claim refund").click()
    expect(page.get_by_text("The merchant is reviewing your refund.")).to_be_visible()
    expect(page.get_by_text(customer)).to_be_visible()  # checksummed
    audited("3-claimed")

    approved = api_client.post(f"/api/v1/refunds/{refund['id']}/approve").json()
    payout = approved["payout"]
    outgoing = Draft.objects.get(pk=payout["draftId"])
    assert approved["status"] == "Approved" and outgoing.receiver_address == customer
    uri = payout["paymentUri"].lower()  # EIP-681: the token's transfer to the customer, for the merchant's wallet
    assert uri.startswith(f"ethereum:{ethereum.token.address.lower()}") and customer.lower() in uri
    page.reload()
    expect(page.get_by_text("Approved. The merchant is sending your refund.")).to_be_visible()
    audited("4-approved")

    pay_and_confirm(ethereum, customer, approved["amountSats"])  # the merchant pays from their own wallet
    refund_now = api_client.get(f"/api/v1/refunds/{refund['id']}").json()
    assert refund_now["status"] == "Paid", refund_now
    tx_id = refund_now["payout"]["txId"]
    assert tx_id and ethereum.w3.eth.get_transaction_receipt(tx_id)["status"] == 1
    page.reload()
    expect(page.get_by_text("Your refund has been sent and confirmed.")).to_be_visible()
    expect(page.locator("#txid")).to_have_text(tx_id)
    audited("5-paid")
    # No CSP violation or script error along the way (the refused address answers 422, as it should).
    assert [e for e in errors if "status of 422" not in e] == []
    assert len(errors) == 1
    assert AXE.exists()


def test_every_other_state_reads_plainly_on_a_phone_in_light_and_dark(browser_env, chromium, api_client):  # noqa: F811
    from datetime import timedelta

    from django.utils import timezone

    from tests.refunds.conftest import pay

    def paid_draft() -> str:
        body = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 40_000_000}
        draft = api_client.post("/api/v1/drafts", body, format="json").json()
        return str(pay(Draft.objects.get(pk=draft["id"])).id)

    def token_of(refund: dict) -> str:
        return refund["claimUrl"].rsplit("/", 1)[1]

    draft_id = paid_draft()
    fiat = api_client.post(
        "/api/v1/refunds", {"draftId": draft_id, "fiatCurrency": "EUR", "fiatAmount": "12.50"}, format="json"
    ).json()
    cancelled = api_client.post("/api/v1/refunds", {"draftId": draft_id, "amountSats": 1_000}, format="json").json()
    api_client.post(f"/api/v1/refunds/{cancelled['id']}/cancel")
    expired = api_client.post("/api/v1/refunds", {"draftId": draft_id, "amountSats": 2_000}, format="json").json()
    Refund.objects.filter(pk=expired["id"]).update(expires_at=timezone.now() - timedelta(minutes=1))
    states = {
        "fiat-claimable": (token_of(fiat), "€12.50"),
        "cancelled": (token_of(cancelled), "The merchant cancelled this refund."),
        "expired": (token_of(expired), "This refund link has expired."),
        "not-found": ("n" * 43, "Refund link not found"),
    }
    for scheme in ("light", "dark"):
        context = chromium.new_context(viewport=PHONE, device_scale_factor=2, color_scheme=scheme, bypass_csp=True)
        page = context.new_page()
        for name, (token, text) in states.items():
            page.goto(f"{browser_env.url}/refund/{token}")
            expect(page.get_by_text(text).first).to_be_visible()
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], name
            shot(page, f"phone-{scheme}-{name}")
            assert axe_serious(page) == [], f"{scheme} {name}"
        context.close()

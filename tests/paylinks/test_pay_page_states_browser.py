"""Every state of the pay page as a payer meets it, in Chromium at 360 and 1280 px, with the
payments made on a real Ethereum node (anvil) and found by the watcher: choose, waiting,
quote window over, confirming n of m, short within the window, far off, paid twice, paid,
paid late, expired and cancelled. Each page names the merchant and its support contact, is
axe-core clean and fits the phone's width; screenshots go to var/screenshots/payer-trust/."""

from __future__ import annotations

import io
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from PIL import Image
from playwright.sync_api import expect

from accounts.profiles import merchant_profile_update
from drafts.models import Draft
from drafts.tasks import expire_drafts
from paylinks.models import PaymentRequest
from tests.browser import AXE, axe_serious
from tests.paylinks.test_pay_page_browser import (
    DESKTOP,
    PHONE,
    browser_env,  # noqa: F401 - fixture
    create_link,
    live_asgi,  # noqa: F401 - fixture
    watch_ethereum,
)

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "var" / "screenshots" / "payer-trust"
SHOP = "https://corner.example/orders/A-1042"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="Debian's chromium is not installed"),
]


def _profile(owner) -> None:
    logo = io.BytesIO()
    image = Image.new("RGB", (160, 160), (111, 78, 55))
    image.paste((245, 235, 220), (40, 40, 120, 120))
    image.save(logo, format="PNG")
    merchant_profile_update(
        user=owner,
        changes={
            "display_name": "Corner Coffee",
            "support_email": "help@corner.example",
            "support_url": "https://corner.example/help",
        },
        logo=logo.getvalue(),
    )


def _choose(api_client, link: dict) -> Draft:
    response = api_client.post(
        f"/api/v1/checkout/{link['token']}/select", {"currency": "USDC", "network": "Ethereum"}, format="json"
    )
    assert response.status_code in (200, 201), response.json()
    return Draft.objects.get(pk=response.json()["draftId"])


def test_each_state_tells_the_payer_what_happened_on_a_phone_and_a_desktop(
    browser_env,  # noqa: F811
    live_asgi,  # noqa: F811 - the page's long polls reach the ASGI app, as through nginx
    chromium,
    api_client,
    ethereum,
    owner,
):
    _profile(owner)
    watch_ethereum()  # the watcher starts before any payment, as in production
    token = ethereum.token
    states: dict[str, tuple[str, str]] = {}  # name -> (pay token, what the page must say)

    def link(name: str, **extra) -> tuple[dict, str]:
        receiver = ethereum.new_address()
        made = create_link(api_client, receiver=receiver, returnUrl=SHOP, **extra)
        return made, receiver

    made, _ = link("choose")
    states["1-choose"] = (made["token"], "Choose how you want to pay.")

    made, _ = link("pending")
    _choose(api_client, made)
    states["2-waiting"] = (made["token"], "Waiting for your payment.")

    made, _ = link("quote-over")
    draft = _choose(api_client, made)
    Draft.objects.filter(pk=draft.pk).update(quote_expires_at=timezone.now() - timedelta(seconds=1))
    states["3-quote-over"] = (made["token"], "The quote window is over, but the amount still holds")

    # Settled payments first: far off, paid, paid twice, paid late.
    far, far_receiver = link("far-off")
    far_draft = _choose(api_client, far)
    ethereum.pay_token(token, far_receiver, far_draft.amount_base_units // 2)
    # A transfer that pays nothing is the merchant's business: this payer's page still waits.
    states["6-far-off"] = (far["token"], "Send exactly")

    paid, paid_receiver = link("paid")
    ethereum.pay_token(token, paid_receiver, _choose(api_client, paid).amount_base_units)
    states["8-paid"] = (paid["token"], "Payment confirmed. Thank you!")

    twice, twice_receiver = link("twice")
    twice_draft = _choose(api_client, twice)
    ethereum.pay_token(token, twice_receiver, twice_draft.amount_base_units)

    late, late_receiver = link("late")
    late_draft = _choose(api_client, late)
    Draft.objects.filter(pk=late_draft.pk).update(expires_at=timezone.now())
    time.sleep(0.01)
    expire_drafts()
    ethereum.pay_token(token, late_receiver, late_draft.amount_base_units)
    states["9-paid-late"] = (late["token"], "arrived after the payment window closed")

    ethereum.mine(15)
    watch_ethereum()
    assert PaymentRequest.objects.get(pk=twice["id"]).status == "Paid"
    ethereum.pay_token(token, twice_receiver, twice_draft.amount_base_units)  # the payer pays again
    ethereum.mine(15)
    watch_ethereum()
    # The second transfer is reported to the merchant (draft.paid_again); the payer's page shows their payment.
    states["7-paid-twice"] = (twice["token"], "Payment confirmed. Thank you!")

    # Then payments still confirming: exact, and 4% short.
    seen, seen_receiver = link("seen")
    ethereum.pay_token(token, seen_receiver, _choose(api_client, seen).amount_base_units)
    short, short_receiver = link("short")
    short_draft = _choose(api_client, short)
    ethereum.pay_token(token, short_receiver, short_draft.amount_base_units * 96 // 100)
    ethereum.mine(2)
    watch_ethereum()
    states["4-confirming"] = (seen["token"], "Payment seen. Confirming:")
    states["5-short"] = (short["token"], "Corner Coffee can also accept the amount received as payment in full")

    expired, _ = link("expired")
    PaymentRequest.objects.filter(pk=expired["id"]).update(expires_at=timezone.now())
    states["10-expired"] = (expired["token"], "Ask Corner Coffee for a new link.")

    cancelled, _ = link("cancelled")
    api_client.post(f"/api/v1/payment-requests/{cancelled['id']}/cancel")
    states["11-cancelled"] = (cancelled["token"], "This payment request was cancelled.")

    assert Draft.objects.get(pk=late_draft.pk).paid_late
    assert AXE.exists(), "axe-core is missing: run `make test` (npm ci)"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for label, viewport, scheme in (
        ("phone", PHONE, "light"),
        ("desktop", DESKTOP, "light"),
        ("phone-dark", PHONE, "dark"),
    ):
        # bypass_csp lets the test inject axe-core; the page's own policy is tested from its headers.
        context = chromium.new_context(viewport=viewport, bypass_csp=True, color_scheme=scheme)
        page = context.new_page()
        live_asgi(page)
        errors: list[str] = []
        page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
        for name, (pay_token, says) in sorted(states.items(), key=lambda item: int(item[0].split("-")[0])):
            page.goto(f"{browser_env.url}/pay/{pay_token}")
            expect(page.get_by_text(says).first).to_be_visible()
            expect(page.get_by_text("Paying Corner Coffee")).to_be_visible()
            expect(page.get_by_role("link", name="help@corner.example")).to_be_visible()
            back = page.get_by_role("link", name="Back to Corner Coffee")
            if name.split("-", 1)[1] in ("paid", "paid-late", "paid-twice", "expired", "cancelled"):
                expect(back).to_have_attribute("href", SHOP)
            else:
                expect(back).to_have_count(0)
            logo = page.locator("header img.logo")
            assert logo.evaluate("img => img.complete && img.naturalWidth > 0"), name
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], name
            page.screenshot(path=str(SCREENSHOTS / f"{label}-{name}.png"), full_page=True)
            assert axe_serious(page) == [], f"{label} {name}"
        assert errors == [], errors
        context.close()


def test_with_javascript_off_the_waiting_page_refreshes_itself_to_the_news(
    browser_env,  # noqa: F811
    chromium,
    api_client,
    owner,
):
    from tests.paylinks.conftest import pay

    _profile(owner)
    made = create_link(api_client)
    draft = _choose(api_client, made)
    context = chromium.new_context(viewport=PHONE, java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{browser_env.url}/pay/{made['token']}")
    expect(page.get_by_text("Waiting for your payment.")).to_be_visible()
    expect(page.get_by_role("link", name="Reload to check")).to_be_visible()

    pay(str(draft.id), confirmations=2, tx_id="0x" + "cd" * 32)  # what the watcher records

    # No script runs: the page's own refresh (every 20 s) brings the news.
    expect(page.get_by_text("Payment seen. Confirming:")).to_be_visible(timeout=30_000)
    context.close()

"""The pay page in real Chromium in English, German, Arabic (right to left) and Japanese on a
360 px phone and a 1280 px desktop: it fits without sideways scrolling, axe-core finds nothing
serious, and the screenshots go to var/screenshots/i18n/ to be looked at."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from drafts.models import Draft
from payments.registry import format_amount, get_asset
from tests.browser import CHROMIUM, axe_serious
from tests.paylinks import test_pay_page_browser as on_the_pay_page
from tests.paylinks.conftest import pay
from tests.paylinks.test_pay_page_browser import DESKTOP, PHONE, create_link

browser_env = on_the_pay_page.browser_env  # the live server, as there
live_asgi = on_the_pay_page.live_asgi

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "screenshots" / "i18n"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]

WAITING = {
    "en": "Waiting for your payment.",
    "de": "Wir warten auf Ihre Zahlung.",
    "ar": "بانتظار دفعتك.",
    "ja": "お支払いをお待ちしています。",
}
PAID = {
    "en": "Payment confirmed. Thank you!",
    "de": "Zahlung bestätigt. Vielen Dank!",
    "ar": "تم تأكيد الدفع. شكرًا لك!",
    "ja": "支払いが確認されました。ありがとうございます！",
}


@pytest.mark.parametrize("language", ["en", "de", "ar", "ja"])
def test_the_pay_page_reads_well_in_each_script(browser_env, live_asgi, chromium, api_client, language):
    SHOTS.mkdir(parents=True, exist_ok=True)
    pending = create_link(api_client)
    api_client.post(
        f"/api/v1/checkout/{pending['token']}/select", {"currency": "USDC", "network": "Ethereum"}, format="json"
    )
    paid = create_link(api_client)
    chosen = api_client.post(
        f"/api/v1/checkout/{paid['token']}/select", {"currency": "USDC", "network": "Ethereum"}, format="json"
    ).json()
    pay(chosen["draftId"], confirmations=12, tx_id="0x" + "cd" * 32)
    for width, viewport in {"phone": PHONE, "desktop": DESKTOP}.items():
        context = chromium.new_context(
            viewport=viewport, device_scale_factor=2, locale=language, bypass_csp=True, java_script_enabled=True
        )
        page = context.new_page()
        live_asgi(page)  # the page's long poll goes to the ASGI app, as nginx sends it
        errors: list[str] = []
        page.on(
            "console", lambda message, errors=errors: errors.append(message.text) if message.type == "error" else None
        )

        page.goto(f"{browser_env.url}/pay/{pending['token']}")  # the browser's own Accept-Language
        expect(page.get_by_text(WAITING[language])).to_be_visible()
        assert page.evaluate("document.documentElement.lang") == language
        assert page.evaluate("document.documentElement.dir") == ("rtl" if language == "ar" else "ltr")
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        address = page.locator("#address")
        assert page.evaluate("el => getComputedStyle(el).direction", address.element_handle()) == "ltr"
        draft = Draft.objects.get(payment_request_id=pending["id"])
        # Shown as the language writes it; copied as the wallet reads it.
        exact = format_amount(draft.amount_base_units, get_asset("USDC", "Ethereum"))
        assert page.locator("#amount").get_attribute("data-value") == exact
        countdown = page.locator("time[data-countdown=draft]").inner_text()  # written by pay.js
        assert re.fullmatch(r"[٠-٩]+:[٠-٩]{2}" if language == "ar" else r"\d+:\d{2}", countdown), countdown
        assert axe_serious(page) == [], f"{language} pending"
        page.screenshot(path=str(SHOTS / f"{language}-{width}-pending.png"), full_page=True)

        page.goto(f"{browser_env.url}/pay/{paid['token']}")
        expect(page.get_by_text(PAID[language])).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        assert axe_serious(page) == [], f"{language} paid"
        page.screenshot(path=str(SHOTS / f"{language}-{width}-paid.png"), full_page=True)
        assert errors == []
        context.close()


def test_the_language_picker_works_without_javascript(browser_env, chromium, api_client):
    link = create_link(api_client)
    context = chromium.new_context(viewport=PHONE, locale="en-US", java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{browser_env.url}/pay/{link['token']}")

    page.get_by_label("Language").select_option("ar")
    page.get_by_role("button", name="Change").click()
    expect(page.get_by_text("اختر طريقة الدفع.")).to_be_visible()
    page.goto(f"{browser_env.url}/pay/{link['token']}")  # the cookie keeps it

    assert page.evaluate("document.documentElement.lang") == "ar"
    context.close()

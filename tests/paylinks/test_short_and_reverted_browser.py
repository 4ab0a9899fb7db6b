"""Two states a payer must understand without help, in Chromium at 360 and 1280 px, in English,
German and Japanese: a short payment (what arrived, what is missing, a payment URI and QR code
for exactly the rest, the receipt email field kept) and a confirmed payment that left the chain
(a reorg reported by the watcher). Both are reached through the watchers' door
(drafts.services.draft_payment_apply), axe-core finds nothing serious, the page fits the
phone, and no English is left on the German and Japanese pages. Screenshots go to
var/screenshots/payer-states/."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from accounts.profiles import merchant_profile_update
from drafts.enums import DraftStatus
from drafts.models import Draft
from drafts.services import PaymentObservation, draft_payment_apply
from paylinks.models import PaymentRequest
from payments.registry import format_amount, get_asset
from tests.browser import AXE, axe_serious
from tests.paylinks import test_pay_page_browser as on_the_pay_page
from tests.paylinks.conftest import pay
from tests.paylinks.test_every_language import leftovers
from tests.paylinks.test_pay_page_browser import DESKTOP, PHONE, create_link

browser_env = on_the_pay_page.browser_env  # the live server, as there
live_asgi = on_the_pay_page.live_asgi

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "screenshots" / "payer-states"
TX = "0x" + "e1" * 32

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="Debian's chromium is not installed"),
]

SAYS = {
    "en": {
        "short": "A payment arrived, but less than the amount due.",
        "rest": "Send the missing amount to complete this payment",
        "reverted": "Your payment is no longer on the chain.",
        "again": "Do not send the payment again. Corner Coffee will contact you if needed.",
    },
    "de": {
        "short": "Eine Zahlung ist eingegangen, aber weniger als der fällige Betrag.",
        "rest": "Senden Sie den fehlenden Betrag, um diese Zahlung abzuschließen",
        "reverted": "Ihre Zahlung ist nicht mehr in der Blockchain.",
        "again": "Senden Sie die Zahlung nicht erneut. Corner Coffee meldet sich bei Bedarf bei Ihnen.",
    },
    "ja": {
        "short": "支払いが届きましたが、請求額より少ない金額です。",
        "rest": "不足額を送金してこの支払いを完了してください",
        "reverted": "お支払いはチェーン上から消えました。",
        "again": "支払いを再送しないでください。必要に応じて Corner Coffee からご連絡します。",
    },
}


def _chosen(api_client) -> tuple[dict, Draft]:
    link = create_link(api_client, memo="Two coffees")  # test_every_language's data, the same in every language
    chosen = api_client.post(
        f"/api/v1/checkout/{link['token']}/select", {"currency": "USDC", "network": "Ethereum"}, format="json"
    ).json()
    return link, Draft.objects.get(pk=chosen["draftId"])


def test_a_short_and_a_reverted_payment_read_plainly_in_each_language_on_a_phone_and_a_desktop(
    browser_env, live_asgi, chromium, api_client, owner
):
    merchant_profile_update(
        user=owner, changes={"display_name": "Corner Coffee", "support_email": "help@corner.example"}
    )
    short_link, short = _chosen(api_client)
    received = short.amount_base_units * 96 // 100
    pay(str(short.id), confirmations=1, received=received, tx_id="0x" + "d4" * 32)  # what the watcher saw
    rest = short.amount_base_units - received
    assert Draft.objects.get(pk=short.pk).status == DraftStatus.AMOUNT_MISMATCH

    reverted_link, reverted = _chosen(api_client)
    pay(str(reverted.id), confirmations=reverted.required_confirmations, tx_id=TX)
    assert PaymentRequest.objects.get(pk=reverted_link["id"]).status == "Paid"
    # The next watcher pass no longer finds the transfer: the chain reorganized under it.
    draft_payment_apply(
        draft_id=reverted.id, observation=PaymentObservation(tx_id=TX, received_base_units=0, vanished=True)
    )
    assert Draft.objects.get(pk=reverted.pk).status == DraftStatus.PENDING

    asset = get_asset("USDC", "Ethereum")
    assert AXE.exists(), "axe-core is missing: run `make test` (npm ci)"
    SHOTS.mkdir(parents=True, exist_ok=True)
    english: dict[tuple[str, str], str] = {}
    for width, viewport in {"phone": PHONE, "desktop": DESKTOP}.items():
        for language in ("en", "de", "ja"):
            says = SAYS[language]
            context = chromium.new_context(viewport=viewport, locale=language, bypass_csp=True)
            page = context.new_page()
            live_asgi(page)
            errors: list[str] = []
            page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)

            page.goto(f"{browser_env.url}/pay/{short_link['token']}")
            expect(page.get_by_text(says["short"])).to_be_visible()
            received_text, missing_text = page.locator("#received").inner_text(), page.locator("#missing").inner_text()
            assert "USDC" in received_text and "USDC" in missing_text
            assert page.get_by_text(says["rest"]).is_visible()
            rest_uri = page.locator("#pay-rest").get_attribute("href")
            assert rest_uri.endswith(f"&uint256={rest}") and short.receiver_address in rest_uri
            assert page.locator("figure.qr svg").is_visible()  # the QR code of that URI
            expect(page.locator("#receipt-email")).to_be_visible()  # the email field is kept
            if language == "en":
                assert format_amount(received, asset) in received_text and format_amount(rest, asset) in missing_text
            _looked_at(page, viewport, f"{language}-{width}-short")
            english_or_none = _compared(english, ("short", width), language, page.content())
            assert english_or_none == set(), f"{language} short: English left {english_or_none}"

            page.goto(f"{browser_env.url}/pay/{reverted_link['token']}")
            expect(page.get_by_text(says["reverted"])).to_be_visible()
            expect(page.get_by_text(says["again"])).to_be_visible()
            expect(page.locator(".reverted-tx")).to_have_text(TX)
            expect(page.locator("#receipt-pdf")).to_have_count(0)  # no receipt for a payment that is gone
            expect(page.locator("#open-wallet")).to_have_count(0)
            _looked_at(page, viewport, f"{language}-{width}-reverted")
            english_or_none = _compared(english, ("reverted", width), language, page.content())
            assert english_or_none == set(), f"{language} reverted: English left {english_or_none}"
            assert errors == [], errors
            context.close()


def _looked_at(page, viewport: dict, name: str) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], name
    assert axe_serious(page) == [], name
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def _compared(english: dict, key: tuple[str, str], language: str, html: str) -> set[str]:
    """English prose left on a translated page (none on the English page itself)."""
    if language == "en":
        english[key] = html
        return set()
    return leftovers(english[key], html, language)

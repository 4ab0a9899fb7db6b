"""A test-mode pay link's page says so and offers "Simulate payment": the payer's click pays
the draft through the watchers' door; a live link has neither."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from playwright.sync_api import expect

from paylinks.models import PaymentRequest
from tests.browser import CHROMIUM, axe_serious
from tests.drafts.conftest import ADDRESSES
from tests.paylinks.test_pay_page_browser import (  # noqa: F401 - the pay page's fixtures
    DESKTOP,
    PHONE,
    browser_env,
    live_asgi,
)

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "var" / "screenshots" / "testmode"


def link_body() -> dict:
    return {
        "fiatCurrency": "EUR",
        "fiatAmount": 18.5,
        "options": [
            {"currency": "USDC", "network": "Sepolia", "receiverAddress": ADDRESSES["Sepolia"]},
            {"currency": "BTC", "network": "Testnet", "receiverAddress": ADDRESSES["Testnet"]},
        ],
        "memo": "Test order",
    }


@pytest.fixture
def test_link(make_key, settings):
    from rest_framework.test import APIClient

    settings.API_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}
    settings.CHECKOUT_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(livemode=False)}")

    def create() -> dict:
        response = client.post("/api/v1/payment-requests", link_body(), format="json")
        assert response.status_code == 201, response.content
        assert response.json()["livemode"] is False
        return response.json()

    return create


@pytest.mark.django_db
def test_simulate_payment_pays_a_test_links_draft(test_link):
    link = test_link()
    page = Client()
    page.post(f"/pay/{link['token']}/select", {"option": "USDC:Sepolia:SingleOutput"})
    html = page.get(f"/pay/{link['token']}").content.decode()
    assert "Test mode" in html and "Simulate payment" in html

    response = page.post(f"/pay/{link['token']}/simulate")
    assert response.status_code == 303
    request = PaymentRequest.objects.select_related("draft").get(pk=link["id"])
    assert request.status == "Paid" and request.draft.status == "Confirmed"
    assert "Simulate payment" not in page.get(f"/pay/{link['token']}").content.decode()


@pytest.mark.django_db
def test_a_test_links_receipt_goes_to_the_merchant_marked_as_a_test(test_link, owner, settings):
    from django.core import mail

    from notifications.models import EmailNotification
    from notifications.services import emails_send_due

    link = test_link()
    page = Client()
    page.post(f"/pay/{link['token']}/select", {"option": "USDC:Sepolia:SingleOutput"})
    page.post(f"/pay/{link['token']}/receipt", {"email": "payer@example.net"}, HTTP_ORIGIN="null")
    page.post(f"/pay/{link['token']}/simulate")
    assert EmailNotification.objects.get(kind="payment_receipt").to == owner.email
    mail.outbox.clear()
    emails_send_due(limit=100)
    assert mail.outbox and all(m.to == [owner.email] for m in mail.outbox)  # the payer's address is never written to
    receipt = next(m for m in mail.outbox if "18.50" in m.body)
    assert receipt.subject.startswith("[TEST] ") and receipt.extra_headers["X-Test-Mode"] == "true"


@pytest.mark.django_db
def test_a_live_link_has_no_simulate_button_and_refuses_the_post(api_client, settings):
    settings.CHECKOUT_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}
    link = api_client.post("/api/v1/payment-requests", link_body(), format="json").json()
    page = Client()
    page.post(f"/pay/{link['token']}/select", {"option": "USDC:Sepolia:SingleOutput"})
    html = page.get(f"/pay/{link['token']}").content.decode()
    assert "Simulate payment" not in html and "Test mode" not in html
    assert page.post(f"/pay/{link['token']}/simulate").status_code == 404
    assert PaymentRequest.objects.select_related("draft").get(pk=link["id"]).draft.status == "Pending"


def _to_pending(page, url: str) -> None:
    page.goto(url)
    page.get_by_role("radio", name="USDC").first.check()
    page.get_by_role("button", name="Show payment details").click()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_button_in_chromium_is_accessible_and_pays(browser_env, live_asgi, chromium, test_link, viewport):  # noqa: F811
    width = viewport["width"]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    # Under the page's own CSP: the flow works and the browser refuses nothing.
    page = chromium.new_page(viewport=viewport)
    live_asgi(page)  # the page's long poll goes to the ASGI process, as nginx sends it
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    _to_pending(page, f"{browser_env.url}/pay/{test_link()['token']}")
    expect(page.get_by_text("Test mode: no real funds move.")).to_be_visible()
    page.get_by_role("button", name="Simulate payment").click()
    expect(page.get_by_text("Payment confirmed. Thank you!")).to_be_visible()
    assert errors == []

    # bypass_csp lets the test inject axe-core; the page's own policy was exercised above.
    context = chromium.new_context(viewport=viewport, bypass_csp=True)
    page = context.new_page()
    live_asgi(page)
    _to_pending(page, f"{browser_env.url}/pay/{test_link()['token']}")
    expect(page.get_by_role("button", name="Simulate payment")).to_be_visible()
    assert axe_serious(page) == []
    page.screenshot(path=str(SCREENSHOTS / f"pay-pending-{width}.png"), full_page=True)
    page.get_by_role("button", name="Simulate payment").click()
    expect(page.get_by_text("Payment confirmed. Thank you!")).to_be_visible()
    assert axe_serious(page) == []
    page.screenshot(path=str(SCREENSHOTS / f"pay-paid-{width}.png"), full_page=True)
    context.close()

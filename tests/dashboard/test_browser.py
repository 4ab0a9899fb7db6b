"""The dashboard in a real browser (Debian's chromium through playwright) at phone and desktop
widths: create a fiat-priced draft with the live fee preview, find it in the list, open it,
download its PDF, add a webhook and see its secret once. Every page is checked with axe-core
(vendored through package.json) for serious accessibility violations. Screenshots go to
var/screenshots/ (git-ignored)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings as django_settings
from django.test import Client, override_settings
from django.utils import timezone

from drafts.models import Draft
from payments.formatting import local_moment
from tests.browser import axe_serious
from tests.conftest import stepped_up
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from webhooks.models import Webhook

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "screenshots"


def _signed_in_context(browser, live_server, user, width: int, height: int):
    client = stepped_up(Client(), user)  # a recent second factor (accounts.stepup)
    cookie = client.cookies[django_settings.SESSION_COOKIE_NAME]
    # bypass_csp lets the test inject axe-core; the page's own policy is checked from the headers.
    context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True, accept_downloads=True)
    context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": live_server.url}])
    return context


_axe_serious = axe_serious


def _no_horizontal_overflow(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")


@pytest.mark.parametrize(("width", "height", "name"), [(360, 780, "phone"), (1280, 860, "desktop")])
def test_a_merchant_creates_a_draft_and_a_webhook_in_the_browser(chromium, live_server, owner, width, height, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with override_settings(PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES, OUTBOUND_ALLOW_LOOPBACK=True):
        context = _signed_in_context(chromium, live_server, owner, width, height)
        page = context.new_page()
        problems: list[str] = []

        response = page.goto(f"{live_server.url}/dashboard/drafts/new")
        assert response.status == 200 and "default-src 'none'" in response.headers["content-security-policy"]
        page.get_by_label("Network").select_option("Base")
        page.get_by_label("Currency", exact=True).select_option("USDC")
        page.get_by_label("Receiving address").fill(ADDRESSES["Base"])
        page.get_by_label("Fiat currency", exact=True).fill("EUR")
        page.get_by_label("Fiat amount", exact=True).fill("120")
        page.get_by_label("Memo").fill(f"Order {name}")
        preview = page.locator("#fee-preview")
        try:
            preview.filter(has_text="Fee:").wait_for(timeout=20000)  # the live preview, by app.js
        except Exception:
            raise AssertionError(f"fee preview says: {preview.inner_text()!r}") from None
        assert "USDC" in preview.inner_text()
        problems += _axe_serious(page)
        assert _no_horizontal_overflow(page)
        page.screenshot(path=str(SHOTS / f"dashboard-new-draft-{name}.png"), full_page=True)
        page.get_by_role("button", name="Create draft").click()

        page.wait_for_url("**/dashboard/drafts/*/")
        draft = Draft.objects.get(memo=f"Order {name}")
        assert page.get_by_role("heading", level=1).inner_text().startswith("Draft")
        assert page.locator(".qr svg").is_visible()
        problems += _axe_serious(page)
        assert _no_horizontal_overflow(page)
        page.screenshot(path=str(SHOTS / f"dashboard-draft-{name}.png"), full_page=True)
        with page.expect_download() as download:
            page.get_by_role("link", name="Download PDF").click()
        assert Path(download.value.path()).read_bytes().startswith(b"%PDF")

        page.goto(f"{live_server.url}/dashboard/drafts/")
        with timezone.override("UTC"):  # the account's zone (none set: UTC), as the list writes it
            created = local_moment(draft.created_at)
        assert page.get_by_role("link", name=created).first.is_visible()
        problems += _axe_serious(page)
        assert _no_horizontal_overflow(page)
        page.screenshot(path=str(SHOTS / f"dashboard-drafts-{name}.png"), full_page=True)

        page.goto(f"{live_server.url}/dashboard/webhooks/")
        page.get_by_label("Endpoint URL").fill(f"http://127.0.0.1:9/{name}")
        page.get_by_role("button", name="Add endpoint").click()
        secret = page.locator("#webhook-secret").inner_text()
        assert secret == Webhook.objects.get(url=f"http://127.0.0.1:9/{name}").secret
        problems += _axe_serious(page)
        page.screenshot(path=str(SHOTS / f"dashboard-webhook-secret-{name}.png"), full_page=True)
        page.goto(f"{live_server.url}/dashboard/webhooks/")
        assert secret not in page.content()

        page.goto(f"{live_server.url}/dashboard/pay-links/new")
        page.get_by_label("Amount", exact=True).fill("35")
        page.locator("#id_option0_currency").select_option("USDC")
        page.locator("#id_option0_network").select_option("Ethereum")
        page.locator("#id_option0_receiverAddress").fill(ADDRESSES["Ethereum"])
        problems += _axe_serious(page)
        assert _no_horizontal_overflow(page)
        page.get_by_role("button", name="Create pay link").click()
        page.wait_for_url("**/dashboard/pay-links/*/")
        pay_url = page.locator("#pay-url").inner_text()
        assert "/pay/" in pay_url
        problems += _axe_serious(page)
        page.screenshot(path=str(SHOTS / f"dashboard-paylink-{name}.png"), full_page=True)
        hosted = context.new_page()
        assert hosted.goto(pay_url.replace(django_settings.BASE_URL, live_server.url)).status == 200
        assert "35" in hosted.content()
        hosted.close()

        page.goto(f"{live_server.url}/dashboard/")
        problems += _axe_serious(page)
        assert _no_horizontal_overflow(page)
        page.screenshot(path=str(SHOTS / f"dashboard-overview-{name}.png"), full_page=True)
        for path in (
            "/dashboard/api-keys/",
            "/dashboard/fees/",
            "/dashboard/pay-links/",
            "/dashboard/transfers/",
            "/dashboard/security/",
            "/dashboard/notifications/",
            "/dashboard/profile/",
        ):
            page.goto(f"{live_server.url}{path}")
            problems += _axe_serious(page)
            assert _no_horizontal_overflow(page), path
        page.screenshot(path=str(SHOTS / f"dashboard-profile-{name}.png"), full_page=True)
        context.close()
    assert problems == []


def test_a_merchant_adds_a_passkey_signs_out_and_signs_in_with_it(chromium, live_server, owner, settings):
    """Chromium's virtual authenticator (DevTools WebAuthn domain) stands in for a phone or
    security key: user verification on, resident keys, as the service requires."""
    settings.BASE_URL = live_server.url  # the relying party is the site the browser is on
    context = _signed_in_context(chromium, live_server, owner, 1280, 860)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text))
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    page.goto(f"{live_server.url}/dashboard/security/")
    page.get_by_label("Name of the new passkey").fill("Laptop")
    page.get_by_role("button", name="Add a passkey").click()
    try:
        page.get_by_text("Laptop · added").wait_for(timeout=20000)
    except Exception:
        raise AssertionError(page.locator("#passkey-add-result").inner_text() + " | " + " ".join(console)) from None
    assert owner.passkeys.get().name == "Laptop"
    page.screenshot(path=str(SHOTS / "dashboard-security-desktop.png"), full_page=True)

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/account/sign-in**")
    page.goto(f"{live_server.url}/dashboard/")  # signed out: sent to sign-in, coming back here
    page.wait_for_url("**/account/sign-in?next=**")
    policy = page.request.get(f"{live_server.url}/account/sign-in").headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    page.get_by_role("button", name="Sign in with a passkey").click()
    page.wait_for_url(lambda url: urlsplit(url).path == "/dashboard/", timeout=20000)
    assert page.get_by_role("heading", name="Overview").is_visible()
    page.screenshot(path=str(SHOTS / "dashboard-after-passkey-sign-in-desktop.png"), full_page=True)
    context.close()

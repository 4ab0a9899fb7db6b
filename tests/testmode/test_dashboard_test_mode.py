"""The dashboard's "Test mode" switch: while on, every page shows and makes the account's test
objects only; the API key form issues test keys. Checked in Chromium with axe-core at phone
and desktop widths (screenshots under var/screenshots/testmode/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from drafts.models import Draft
from tests.conftest import stepped_up
from tests.dashboard.test_browser import _axe_serious, _no_horizontal_overflow, _signed_in_context
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import make_draft

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "screenshots" / "testmode"


@pytest.fixture(autouse=True)
def _settings(settings):
    settings.PLATFORM_FEE_ADDRESSES = FEE_ADDRESSES


def switch(client: Client, on: bool) -> None:
    response = client.post("/dashboard/mode", {"testMode": "on" if on else "off"})
    assert response.status_code == 302


@pytest.mark.django_db
def test_the_switch_shows_test_drafts_only_and_new_drafts_are_test_drafts(owner):
    live = make_draft(owner, memo="live one")
    test = make_draft(owner, memo="test one", livemode=False, network="Sepolia", currency="USDC",
                      receiver_address=ADDRESSES["Sepolia"])  # fmt: skip
    client = Client()
    client.force_login(owner)

    page = client.get("/dashboard/drafts/").content.decode()
    assert "live one" in page and "test one" not in page and "Test mode: you see" not in page
    assert client.get(f"/dashboard/drafts/{test.id}/").status_code == 404

    switch(client, on=True)
    page = client.get("/dashboard/drafts/").content.decode()
    assert "test one" in page and "live one" not in page and "Test mode: you see" in page
    assert client.get(f"/dashboard/drafts/{live.id}/").status_code == 404

    client.post(
        "/dashboard/drafts/new",
        {"network": "Sepolia", "currency": "USDC", "receiverAddress": ADDRESSES["Sepolia"], "pricing": "exact",
         "amount": "12.5", "memo": "made in test mode", "expiryHours": 24},
    )  # fmt: skip
    made = Draft.objects.filter(memo="made in test mode").first()
    assert made is not None and made.livemode is False

    switch(client, on=False)
    assert "test one" not in client.get("/dashboard/drafts/").content.decode()


@pytest.mark.django_db
def test_the_key_form_issues_a_test_key(owner):
    client = stepped_up(Client(), owner)  # a new key needs a recent second factor (accounts.stepup)
    page = client.post(
        "/dashboard/api-keys/", {"name": "sandbox", "scopes": ["drafts:read"], "testMode": "on"}
    ).content.decode()
    assert "pdk_test_" in page
    assert owner.api_keys.get(name="sandbox").livemode is False


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("width", "height"), [(360, 780), (1280, 860)])
def test_test_mode_pages_in_chromium(chromium, live_server, owner, width, height):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    make_draft(owner, memo="test draft", livemode=False, network="Sepolia", currency="USDC",
               receiver_address=ADDRESSES["Sepolia"])  # fmt: skip
    context = _signed_in_context(chromium, live_server, owner, width, height)
    page = context.new_page()
    page.goto(f"{live_server.url}/dashboard/drafts/")
    switch_button = page.get_by_role("button", name="Test mode")
    assert switch_button.get_attribute("aria-pressed") == "false"
    switch_button.click()
    page.wait_for_url("**/dashboard/")
    assert page.get_by_role("button", name="Test mode").get_attribute("aria-pressed") == "true"
    assert page.get_by_text("Test mode: you see and make test objects only").is_visible()
    assert _axe_serious(page) == []
    assert _no_horizontal_overflow(page)
    page.screenshot(path=str(SHOTS / f"dashboard-overview-{width}.png"), full_page=True)

    page.goto(f"{live_server.url}/dashboard/drafts/")
    assert "test draft" in page.content()  # the memo column (hidden on a phone)
    assert _axe_serious(page) == []
    page.screenshot(path=str(SHOTS / f"dashboard-drafts-{width}.png"), full_page=True)

    page.goto(f"{live_server.url}/dashboard/api-keys/")
    page.get_by_label("Name").fill("sandbox")
    page.get_by_label("Test key").check()
    page.get_by_role("button", name="Create key").click()
    assert page.locator("#api-key").inner_text().startswith("pdk_test_")
    assert _axe_serious(page) == []
    assert _no_horizontal_overflow(page)
    page.screenshot(path=str(SHOTS / f"dashboard-api-keys-{width}.png"), full_page=True)
    context.close()

"""Arabic, right to left: with Arabic offered on the dashboard (DASHBOARD_LANGUAGES) and chosen
by the account, the dashboard and account pages say `dir="rtl"` and their layout mirrors (the
brand at the right, the account controls at the left, table text from the right), at 360 and
1280 px in Chromium, with nothing scrolling sideways. Screenshots: test-artifacts/rtl/."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings

from accounts.models import MerchantProfile
from tests.dashboard.test_browser import _axe_serious, _no_horizontal_overflow, _signed_in_context
from tests.factories import make_draft

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "rtl"
PAGES = ("/dashboard/", "/dashboard/drafts/", "/dashboard/security/", "/dashboard/profile/", "/account/")


@pytest.fixture
def arabic(settings, owner):
    settings.DASHBOARD_LANGUAGES = ["en", "ar"]
    MerchantProfile.objects.update_or_create(user=owner, defaults={"language": "ar"})


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("width", "height"), [(360, 780), (1280, 860)])
def test_arabic_pages_run_right_to_left_and_mirror(chromium, live_server, owner, arabic, width, height):
    SHOTS.mkdir(parents=True, exist_ok=True)
    draft = make_draft(owner)
    context = _signed_in_context(chromium, live_server, owner, width, height)
    page = context.new_page()
    problems: list[str] = []
    for path in (*PAGES, f"/dashboard/drafts/{draft.id}/"):
        page.goto(f"{live_server.url}{path}")
        html = page.locator("html")
        assert (html.get_attribute("lang"), html.get_attribute("dir")) == ("ar", "rtl"), path
        assert _no_horizontal_overflow(page), f"{path} scrolls sideways at {width}px"
        problems.extend(f"{path}: {p}" for p in _axe_serious(page))
        name = path.strip("/").replace("/", "-")[:40] or "overview"
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    # Mirrored: the brand starts at the right edge, the account's controls sit left of it.
    page.goto(f"{live_server.url}/dashboard/drafts/")
    brand = page.locator("a.brand").bounding_box()
    assert brand is not None and brand["x"] + brand["width"] > width * 0.6, brand
    if width >= 1000:
        account = page.locator("div.account").bounding_box()
        assert account is not None and account["x"] < brand["x"], (account, brand)
    cell = page.locator("table th").first
    assert cell.evaluate("e => getComputedStyle(e).textAlign") in ("start", "right")
    # Signed out, in the visitor's language (the lang cookie): the sign-in page too.
    visitor = chromium.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
    host = urlsplit(live_server.url).hostname
    visitor.add_cookies([{"name": settings.LANGUAGE_COOKIE_NAME, "value": "ar", "domain": host, "path": "/"}])
    signed_out = visitor.new_page()
    signed_out.goto(f"{live_server.url}/account/sign-in")
    assert signed_out.locator("html").get_attribute("dir") == "rtl"
    assert _no_horizontal_overflow(signed_out)
    problems.extend(f"sign-in: {p}" for p in _axe_serious(signed_out))
    signed_out.screenshot(path=str(SHOTS / f"sign-in-{width}.png"), full_page=True)
    assert problems == []


@pytest.mark.django_db
def test_english_pages_run_left_to_right(client, owner):
    client.force_login(owner)
    page = client.get("/dashboard/").content.decode()
    assert '<html lang="en" dir="ltr">' in page

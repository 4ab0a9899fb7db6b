"""The dashboard's navigation in four groups (payments, customers, developers, settings): the
groups in one row, the current group's pages below, the page shown and its group marked. In
Chromium at 360 and 1280 px: both marks are in view without scrolling, nothing scrolls
sideways, axe-core finds nothing serious (screenshots in var/screenshots/navigation/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from tests.dashboard.test_browser import _axe_serious, _no_horizontal_overflow, _signed_in_context
from tests.factories import make_draft

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "screenshots" / "navigation"

# page -> (its group, the page link marked current)
PAGES = {
    "/dashboard/": ("Payments", "Overview"),
    "/dashboard/drafts/": ("Payments", "Drafts"),
    "/dashboard/drafts/new": ("Payments", "Drafts"),
    "/dashboard/transfers/": ("Payments", "Transfers"),
    "/dashboard/refunds/": ("Customers", "Refunds"),
    "/dashboard/address-book/": ("Customers", "Address book"),
    "/dashboard/webhooks/": ("Developers", "Webhooks"),
    "/dashboard/api-keys/": ("Developers", "API keys"),
    "/dashboard/profile/": ("Settings", "Profile"),
    "/dashboard/audit-log": ("Settings", "Audit log"),
}
GROUPS = ["Payments", "Customers", "Developers", "Settings"]


def marked(page: str) -> tuple[list[str], str | None, str | None]:
    """(the groups offered, the group marked current, the page link marked current)."""
    groups_nav = re.search(r'<nav aria-label="Sections" class="groups">(.*?)</nav>', page, re.S)
    assert groups_nav
    groups = re.findall(r"<a [^>]*>([^<]+)</a>", groups_nav.group(1))
    group = re.search(r'<a [^>]*aria-current="true"[^>]*>([^<]+)</a>', groups_nav.group(1))
    pages_nav = re.search(r'<nav aria-label="[^"]+" class="pages">(.*?)</nav>', page, re.S)
    current = re.search(r'<a [^>]*aria-current="page"[^>]*>([^<]+)</a>', pages_nav.group(1)) if pages_nav else None
    return groups, group.group(1) if group else None, current.group(1) if current else None


@pytest.mark.django_db
@pytest.mark.parametrize("path", PAGES)
def test_every_page_marks_its_group_and_itself(owner, path):
    client = Client()
    client.force_login(owner)
    groups, group, current = marked(client.get(path).content.decode())

    assert groups == GROUPS
    assert (group, current) == PAGES[path]


@pytest.mark.django_db
def test_a_drafts_own_page_belongs_to_drafts(owner):
    client = Client()
    client.force_login(owner)
    draft = make_draft(owner)
    assert marked(client.get(f"/dashboard/drafts/{draft.id}/").content.decode())[1:] == ("Payments", "Drafts")


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(240)
@pytest.mark.parametrize(("width", "height"), [(360, 780), (1280, 860)])
def test_the_current_section_is_in_view_at_phone_and_desktop_widths(chromium, live_server, owner, width, height):
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = _signed_in_context(chromium, live_server, owner, width, height)
    page = context.new_page()
    for path in ("/dashboard/drafts/", "/dashboard/refunds/", "/dashboard/webhooks/", "/dashboard/profile/"):
        group_name, page_name = PAGES[path]
        page.goto(f"{live_server.url}{path}")
        group = page.locator('nav.groups a[aria-current="true"]')
        current = page.locator('nav.pages a[aria-current="page"]')
        assert group.inner_text() == group_name and current.inner_text() == page_name
        for link in (group, current):  # in view on the first screen, inside the page's width
            box = link.bounding_box()
            assert box is not None and box["y"] + box["height"] <= height and 0 <= box["x"]
            assert box["x"] + box["width"] <= width
        assert _no_horizontal_overflow(page), path
        assert _axe_serious(page) == [], path
        page.screenshot(path=str(SHOTS / f"{group_name.lower()}-{width}.png"), full_page=False)
    # Another group is one tap away: its first page, which then shows that group's pages.
    page.locator("nav.groups").get_by_role("link", name="Developers").click()
    page.wait_for_url("**/dashboard/webhooks/")
    assert page.locator('nav.pages a[aria-current="page"]').inner_text() == "Webhooks"
    context.close()

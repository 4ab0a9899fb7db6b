"""The overview's "Needs attention" list in a real browser (Debian's chromium through
playwright) at 360 and 1280 px: every kind with its button in view, axe-core clean, no
horizontal overflow; cancelling a payment goes through its confirmation page. Screenshots go to
var/screenshots/attention/."""

from __future__ import annotations

import pytest
from django.test import override_settings

from drafts.models import Draft
from tests.attention.test_attention import _every_kind
from tests.dashboard.test_browser import (
    SHOTS,
    _axe_serious,
    _no_horizontal_overflow,
    _signed_in_context,
)
from tests.drafts.conftest import FEE_ADDRESSES

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]

BUTTONS = ("Accept amount…", "Cancel draft…", "Attach transfer", "Approve refund", "Re-enable endpoint", "Rotate key…")


@pytest.mark.parametrize(("width", "height", "name"), [(360, 780, "phone"), (1280, 860, "desktop")])
def test_the_attention_list_holds_up_at_phone_and_desktop_widths(chromium, live_server, owner, width, height, name):
    shots = SHOTS / "attention"
    shots.mkdir(parents=True, exist_ok=True)
    with override_settings(PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES):
        _every_kind(owner, 1)
        context = _signed_in_context(chromium, live_server, owner, width, height)
        page = context.new_page()
        response = page.goto(f"{live_server.url}/dashboard/")
        assert response.status == 200
        assert _axe_serious(page) == []
        assert _no_horizontal_overflow(page)
        page.screenshot(path=str(shots / f"overview-{name}.png"), full_page=True)
        page.locator("#attention").screenshot(path=str(shots / f"attention-{name}.png"))

        assert page.locator("#attention-count").inner_text().startswith("9")
        assert page.locator(".attention-item").count() == 9
        for label in BUTTONS:
            button = page.get_by_role("button", name=label).first
            box = button.bounding_box()
            assert button.is_visible() and box and box["x"] >= 0 and box["x"] + box["width"] <= width, label

        overpaid = Draft.objects.get(user=owner, status="AmountMismatch", received_base_units__gt=30_000_001)
        page.locator(f"#attention-{overpaid.id}").get_by_role("button", name="Cancel draft…").click()
        assert page.get_by_role("heading", name="Cancel this draft?").is_visible()
        assert _axe_serious(page) == []
        page.screenshot(path=str(shots / f"cancel-confirm-{name}.png"), full_page=True)
        page.get_by_role("button", name="Yes, cancel the draft").click()
        assert page.get_by_text("Draft cancelled.").is_visible()
        overpaid.refresh_from_db()
        assert overpaid.status == "Cancelled"
        page.goto(f"{live_server.url}/dashboard/")
        assert page.locator(".attention-item").count() == 8
        context.close()

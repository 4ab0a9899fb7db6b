"""The refund claim page in a real Chromium, in Arabic (right to left) and Japanese at 360 and
1280 px: no sideways scrolling, axe-core clean; screenshots under var/screenshots/i18n/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import axe_serious
from tests.paylinks import test_pay_page_browser as on_the_pay_page
from tests.paylinks.test_pay_page_browser import DESKTOP, PHONE
from tests.refunds.test_claim_page_languages import path_of

browser_env = on_the_pay_page.browser_env

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "var" / "screenshots" / "i18n"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="Debian's chromium is not installed"),
]


@pytest.mark.parametrize("language", ["ar", "ja"])
def test_the_claim_page_reads_well_in_each_script(browser_env, chromium, paid_draft, issue, language):
    SHOTS.mkdir(parents=True, exist_ok=True)
    refund = issue(paid_draft(), fiatCurrency="EUR", fiatAmount=7.5, reason="Returned: wrong size").json()
    for name, viewport in {"phone": PHONE, "desktop": DESKTOP}.items():
        context = chromium.new_context(viewport=viewport, locale=language, bypass_csp=True)
        page = context.new_page()
        page.goto(f"{browser_env.url}{path_of(refund)}")
        assert page.evaluate("document.documentElement.lang") == language
        assert page.evaluate("document.documentElement.dir") == ("rtl" if language == "ar" else "ltr")
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        page.screenshot(path=str(SHOTS / f"refund-{language}-{name}.png"), full_page=True)
        assert axe_serious(page) == []
        context.close()

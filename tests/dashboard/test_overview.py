"""The overview a merchant reads in five seconds: confirmed volume per day (a server-rendered SVG
with the same figures in a table), needs attention, the latest activity newest first (each
linking to its object) and the account's mode. In Chromium at 360 and 1280 px: axe finds nothing
serious, nothing scrolls sideways (screenshots in test-artifacts/overview/)."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.test import Client, override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from dashboard.security import TEST_MODE_SESSION_KEY
from drafts.models import Draft
from payments.registry import get_asset
from tests.dashboard.test_browser import _axe_serious, _no_horizontal_overflow, _signed_in_context
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import draft_payment_observed

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "overview"


@pytest.fixture(autouse=True)
def _operator():
    with override_settings(
        PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES, API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"}
    ):
        yield


def _client(make_key, *, livemode: bool = True) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(livemode=livemode)}")
    return client


def _draft(api: APIClient, amount: int, network: str = "Base") -> dict:
    response = api.post(
        "/api/v1/drafts",
        {"network": network, "currency": "USDC", "receiverAddress": ADDRESSES[network], "amountSats": amount},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def _confirm(draft: dict, tx: str) -> None:
    draft_payment_observed(draft_id=draft["id"], tx_id=tx, received_base_units=draft["amountSats"], confirmations=100)


def _page(owner, *, test_mode: bool = False) -> str:
    browser = Client()
    browser.force_login(owner)
    if test_mode:
        session = browser.session
        session[TEST_MODE_SESSION_KEY] = True
        session.save()
    response = browser.get("/dashboard/")
    assert response.status_code == 200
    return response.content.decode()


def _activity_links(html: str) -> list[tuple[str, str]]:
    section = re.search(r'<section aria-labelledby="activity-h" id="activity">(.*?)</section>', html, re.S)
    assert section
    return re.findall(r'<a href="([^"]+)" data-type="([^"]+)">', section.group(1))


@pytest.mark.django_db
def test_the_chart_shows_the_confirmed_volume_of_each_day(owner, make_key):
    api = _client(make_key)
    paid = [_draft(api, 25_000_000), _draft(api, 7_500_000)]
    _draft(api, 40_000_000)  # never paid: not volume
    for i, draft in enumerate(paid):
        _confirm(draft, f"0x{i:064x}")
    expected = Decimal(0)
    for draft in Draft.objects.filter(id__in=[d["id"] for d in paid]):
        unit = get_asset(draft.currency, draft.network).unit
        expected += (Decimal(draft.amount_base_units) / unit * draft.usd_rate).quantize(Decimal("0.01"))
    day = timezone.localdate().isoformat()

    html = _page(owner)

    bars = re.findall(r"<title>(\d{4}-\d\d-\d\d) (\w+): ([\d.]+) (\w+)</title>", html)
    assert bars and set(bars) == {(day, "USDC", f"{expected}", "USD")}
    assert expected > 0


@pytest.mark.django_db
def test_the_latest_activity_lists_a_new_payment_first(owner, make_key):
    api = _client(make_key)
    first, second = _draft(api, 10_000_000), _draft(api, 11_000_000)
    assert _activity_links(_page(owner))[:2] == [
        (f"/dashboard/drafts/{second['id']}/", "draft.created"),
        (f"/dashboard/drafts/{first['id']}/", "draft.created"),
    ]
    _confirm(first, "0x" + "ab" * 32)
    assert _activity_links(_page(owner))[0] == (f"/dashboard/drafts/{first['id']}/", "draft.confirmed")


@pytest.mark.django_db
def test_test_mode_shows_test_items_and_says_so(owner, make_key):
    live = _draft(_client(make_key), 10_000_000)
    test = _draft(_client(make_key, livemode=False), 12_000_000, network="BaseSepolia")
    _confirm(test, "0x" + "cd" * 32)

    in_test, in_live = _page(owner, test_mode=True), _page(owner)

    assert {href for href, _type in _activity_links(in_test)} == {f"/dashboard/drafts/{test['id']}/"}
    assert {href for href, _type in _activity_links(in_live)} == {f"/dashboard/drafts/{live['id']}/"}
    assert live["id"] not in in_test and test["id"] not in in_live
    assert re.search(r'id="account-mode"[^>]*><span class="badge">Test mode</span>', in_test)
    assert re.search(r'id="account-mode"[^>]*><span class="status">Live mode</span>', in_live)
    assert "USDC:" not in in_live  # the test payment is no live volume


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(240)
@pytest.mark.parametrize(("width", "height"), [(360, 780), (1280, 860)])
def test_the_overview_reads_at_phone_and_desktop_widths(chromium, live_server, owner, make_key, width, height):
    api = _client(make_key)
    for i, amount in enumerate((25_000_000, 60_000_000)):
        _confirm(_draft(api, amount), f"0x{i + 7:064x}")
    _draft(api, 5_000_000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = _signed_in_context(chromium, live_server, owner, width, height)
    page = context.new_page()
    response = page.goto(f"{live_server.url}/dashboard/")
    assert response is not None and "default-src 'none'" in response.headers["content-security-policy"]
    assert page.locator("#account-mode").inner_text().startswith("Live mode")
    assert page.locator("#activity li").count() >= 3 and page.locator(".chart svg:visible").count() == 1
    assert _no_horizontal_overflow(page)
    assert _axe_serious(page) == []
    page.screenshot(path=str(SHOTS / f"overview-{width}.png"), full_page=True)
    context.close()

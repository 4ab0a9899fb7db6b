"""Every list page of the dashboard filters and exports CSV (dashboard.exports, dashboard.lists).

The pages are found in the URLconf: every dashboard route without a parameter is either a list
with an export or named below as no list, so a new list page fails here until it has one. For
each list: its page shows an Export CSV link; the link taken from the page filtered by days gives
the rows of those days only; a choice filter (status, network...) splits the rows without
repeating one (a filter the export ignored would give every row for each value)."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from html import unescape
from pathlib import Path

import pytest
from django.test import Client, override_settings
from django.urls import URLPattern, get_resolver
from django.utils import timezone

from accounts.models import Membership, Role, User
from dashboard.exports import LISTS
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import draft_payment_observed
from tests.platform.test_lists import _make_row
from webhooks.models import Webhook
from webhooks.services import event_record

pytestmark = pytest.mark.django_db

# Dashboard routes without a parameter that list nothing, each with the reason.
NOT_LISTS = {
    "overview": "the summary: needs attention, volume, latest activity (each links to its list)",
    "mode": "the Test mode switch (POST)",
    "organization": "the organization switcher (POST)",
    "draft_new": "a form",
    "fee_preview": "a fragment of the draft form",
    "paylink_new": "a form",
    "receiver_lock": "a switch (POST)",
    "security": "settings of the person",
    "confirm": "the step-up form",
    "totp_off": "a switch (POST)",
    "notifications": "settings",
    "profile": "settings",
    "signout": "POST",
}
# The REST list whose row maker (tests/platform/test_lists.py) makes a row of each page's list.
REST_OF = {
    "drafts": "/api/v1/drafts",
    "paylinks": "/api/v1/payment-requests",
    "refunds": "/api/v1/refunds",
    "api_keys": "/api/v1/api-keys",
    "address_book": "/api/v1/address-book",
    "audit_log": "/api/v1/audit-log",
    "transfers": "/api/v1/transfers",
    "receiving_wallets": "/api/v1/receiving-wallets",
    "templates": "/api/v1/recurring-templates",
    "webhooks": "/api/v1/webhooks",
    "events": "/api/v1/events",
}


def _dashboard_patterns() -> list[URLPattern]:
    _prefix, resolver = get_resolver().namespace_dict["dashboard"]
    return [p for p in resolver.url_patterns if isinstance(p, URLPattern)]


def _routes_without_parameters() -> list[str]:
    return [p.name for p in _dashboard_patterns() if not p.pattern.converters]


def _make_rows(name: str, owner: User, api_client) -> None:
    if name in REST_OF:
        _make_row(REST_OF[name], owner, api_client, 0)
    elif name == "team":
        someone = User.objects.create_user("viewer@example.com", "a long passphrase here")
        Membership.objects.create(organization=owner, person=someone, role=Role.VIEWER)
    elif name == "webhook_deliveries":  # an event of the account, delivered to each of its endpoints
        Webhook.objects.create(user=owner, url="https://hooks.example.com/all", secret="whsec_test")
        event_record(user=owner, type="draft.created", data={"n": 1})
    elif name == "fees":  # a confirmed draft accrues its fee
        body = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 25_000_000}
        draft = api_client.post("/api/v1/drafts", body, format="json").json()
        draft_payment_observed(draft_id=draft["id"], tx_id="0x" + "ef" * 32, received_base_units=25_000_000,
                               confirmations=100)  # fmt: skip
    else:
        raise AssertionError(f"{name}: a list with no row maker here; add one")


def _rows(response) -> list[list[str]]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv"), response
    assert response["Content-Disposition"].startswith("attachment;")
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))


def _export_link(browser: Client, path: str, params: dict) -> str:
    page = browser.get(path, params)
    assert page.status_code == 200, path
    found = re.findall(r'<a href="([^"]+)" class="export-csv" download>Export CSV</a>', page.content.decode())
    assert len(found) == 1, f"{path}: one Export CSV link"
    return unescape(found[0])


@override_settings(
    PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES,
    API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"},
    API_COST_RATE_LIMITS={"csv": {"account": "10000/min"}},
)
def test_every_list_page_exports_the_rows_its_filters_select(owner, api_client):
    routes = _routes_without_parameters()
    lists = [name for name in routes if name not in NOT_LISTS]
    assert {f"dashboard:{name}" for name in lists} == set(LISTS), "a list page without an export, or a stale entry"
    assert len(lists) >= 12
    browser = Client()
    browser.force_login(owner)
    today = timezone.localdate()
    checked = []
    for name in lists:
        spec, path = LISTS[f"dashboard:{name}"], f"/dashboard/{_path_of(name)}"
        _make_rows(name, owner, api_client)
        since, until = spec.date_params

        everything = _rows(browser.get(path + _export_link(browser, path, {})))
        assert everything[0] == list(spec.header) and len(everything) >= 2, name
        before = _rows(browser.get(path + _export_link(browser, path, {until: str(today - timedelta(days=1))})))
        assert before == [everything[0]], f"{name}: rows of later days exported"
        from_today = _rows(browser.get(path + _export_link(browser, path, {since: str(today)})))
        assert from_today == everything, name
        for param, (_field, allowed) in spec.choices.items():
            parts = [_rows(browser.get(path, {param: value, "format": "csv"}))[1:] for value, _label in allowed]
            assert sorted(row for part in parts for row in part) == sorted(everything[1:]), f"{name}: {param}"
        checked.append(name)
    assert sorted(checked) == sorted(lists)


def _path_of(name: str) -> str:
    pattern = next(p for p in _dashboard_patterns() if p.name == name)
    return str(pattern.pattern)


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("width", "height"), [(360, 780), (1280, 860)])
def test_the_list_filters_hold_up_at_phone_and_desktop_widths(chromium, live_server, owner, width, height):
    """Each list page with its filters and Export CSV link: axe finds nothing serious, nothing
    scrolls sideways (screenshots in test-artifacts/lists/)."""
    from tests.dashboard.test_browser import _axe_serious, _no_horizontal_overflow, _signed_in_context

    shots = Path(__file__).resolve().parents[2] / "test-artifacts" / "lists"
    shots.mkdir(parents=True, exist_ok=True)
    context = _signed_in_context(chromium, live_server, owner, width, height)
    page = context.new_page()
    problems = []
    for spec in LISTS.values():
        name = spec.route.split(":")[1]
        page.goto(f"{live_server.url}/dashboard/{_path_of(name)}")
        assert page.get_by_role("link", name="Export CSV").is_visible(), name
        problems += [f"{name}: {p}" for p in _axe_serious(page)]
        assert _no_horizontal_overflow(page), name
        page.screenshot(path=str(shots / f"{spec.filename}-{width}.png"), full_page=True)
    context.close()
    assert problems == []


@override_settings(API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"})
def test_the_pager_keeps_the_filters(owner, api_client):
    for _ in range(21):  # one more than a page
        _make_row("/api/v1/payment-requests", owner, api_client, 0)
    browser = Client()
    browser.force_login(owner)
    page = browser.get("/dashboard/pay-links/", {"status": "Open", "from": "2020-01-01"}).content.decode()
    assert 'href="?status=Open&amp;from=2020-01-01&amp;page=2" rel="next"' in page


@override_settings(API_COST_RATE_LIMITS={"csv": {"account": "10000/min"}})
def test_one_endpoints_deliveries_are_filtered_and_exported_from_its_page(owner):
    shop, backup = (Webhook.objects.create(user=owner, url=f"https://hooks.example.com/{n}", secret="whsec_test")
                    for n in ("shop", "backup"))  # fmt: skip
    event_record(user=owner, type="draft.created", data={"n": 1})
    browser = Client()
    browser.force_login(owner)
    detail = browser.get(f"/dashboard/webhooks/{shop.id}/").content.decode()
    link = unescape(re.search(r'href="(/dashboard/webhooks/deliveries/\?webhook=[^"]+)"', detail).group(1))

    page = browser.get(link).content.decode()
    path = link.split("?")[0]
    rows = _rows(browser.get(path + _export_link(browser, path, {"webhook": str(shop.id)})))

    assert shop.url in page and backup.url not in page
    assert [row[3:5] for row in rows[1:]] == [[str(shop.id), shop.url]]
    everything = _rows(browser.get("/dashboard/webhooks/deliveries/", {"format": "csv"}))
    assert sorted(row[4] for row in everything[1:]) == sorted([shop.url, backup.url])

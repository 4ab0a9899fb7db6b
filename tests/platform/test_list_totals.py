"""A list's `total` at scale (core/api/pagination.py): exact at every request up to
LIST_TOTAL_EXACT_UP_TO rows; a longer list is counted whole at most once per
LIST_TOTAL_CACHE_SECONDS for the same account, mode and filters, so a merchant with millions of
drafts does not pay a full count for every page."""

from __future__ import annotations

import time

import pytest

from drafts.enums import DraftStatus
from tests.factories import make_draft

pytestmark = pytest.mark.django_db


def totals(api_client, query: str = "") -> tuple[int, str]:
    response = api_client.get(f"/api/v1/drafts?pageSize=2{query}")
    assert response.status_code == 200, response.json()
    return response.json()["total"], response.json()["next"]


def test_a_short_list_is_counted_exactly_at_every_request(api_client, owner, settings):
    settings.LIST_TOTAL_EXACT_UP_TO = 10
    for n in range(4):
        make_draft(owner, amount_base_units=1_000_000 + n)
        assert totals(api_client)[0] == n + 1


def test_a_long_lists_total_is_its_whole_count_made_once_per_window_per_filter(api_client, owner, settings):
    settings.LIST_TOTAL_EXACT_UP_TO = 3
    settings.LIST_TOTAL_CACHE_SECONDS = 2
    for n in range(5):
        make_draft(owner, amount_base_units=1_000_000 + n)
    assert totals(api_client)[0] == 5  # past the bound: counted whole, not reported as 3 or 4

    make_draft(owner, amount_base_units=2_000_000)
    assert totals(api_client)[0] == 5  # that count reused within the window...
    assert totals(api_client, "&status=Pending")[0] == 6  # ...for this query only
    make_draft(owner, amount_base_units=2_000_001, status=DraftStatus.EXPIRED)
    assert totals(api_client, "&status=Expired")[0] == 1  # under the bound: exact at once

    time.sleep(2.1)
    assert totals(api_client)[0] == 7  # the window over: counted again

"""The standing concurrency check on PostgreSQL (the embedded SQLite default has its own in
test_make_run.py): 24 creations at once, none fails, every draft and event is written."""

import itertools

import pytest
from rest_framework.test import APIClient

from drafts.models import Draft
from tests.concurrency import run_at_once

RECEIVER = "0x8617E340B3D01FA5F11F306F4090FD50E238070D"


@pytest.mark.django_db(transaction=True)
def test_24_concurrent_draft_creations_all_succeed(make_key):
    key = make_key("drafts:write")
    amounts = itertools.count()  # next() on a count is atomic, unlike on a generator

    def send() -> tuple[int, str]:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        body = {"network": "Base", "currency": "USDC", "receiverAddress": RECEIVER}
        # Half exact and distinct, half the same fiat price (nudged apart).
        index = next(amounts)
        body |= {"amountSats": 1_000_000 + index} if index % 2 else {"fiatCurrency": "EUR", "fiatAmount": 25}
        response = client.post("/api/v1/drafts", body, format="json")
        return response.status_code, response.content.decode()[:200]

    results = run_at_once(24, send)
    assert [status for status, _ in results] == [201] * 24, [r for r in results if r[0] != 201]
    assert Draft.objects.count() == 24
    assert Draft.objects.values("amount_base_units").distinct().count() == 24

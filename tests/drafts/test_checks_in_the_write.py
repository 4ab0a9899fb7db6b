"""A creation's fee-cap and open-amount checks ride in its write on PostgreSQL
(drafts.creation._checks_carried): no read before the write when they pass, and, when one
fails, nothing written by it and the same answer as reading first (402, or the amount nudged)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from drafts.models import Draft, IdempotencyKey
from fees.models import AccruedFee
from tests.drafts.conftest import ADDRESSES
from tests.factories import make_draft
from webhooks.models import Event

pytestmark = pytest.mark.django_db

EXACT = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 5_000_000}
FIAT = {
    "network": "Base",
    "currency": "USDC",
    "receiverAddress": ADDRESSES["Base"],
    "fiatCurrency": "USD",
    "fiatAmount": 12.34,
}
BODIES = pytest.mark.parametrize("body", [EXACT, FIAT], ids=["exact", "fiat-priced"])


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.API_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}


def _owed(user, *, usd: str, at) -> AccruedFee:
    draft = make_draft(user, amount_base_units=1_000 + AccruedFee.objects.count())
    return AccruedFee.objects.create(
        user=user,
        draft=draft,
        fee_usd=Decimal(usd),
        fee_base_units=1,
        currency="USDC",
        network="Ethereum",
        accrued_at=at,
    )


def _written(user) -> tuple[int, int, int]:
    return (
        Draft.objects.filter(user=user, network="Base").count(),
        Event.objects.filter(user=user).count(),
        IdempotencyKey.objects.filter(user=user).count(),
    )


def _reads_of_what_the_write_checks(capture) -> list[str]:
    return [q["sql"] for q in capture.captured_queries if "fees_accruedfee" in q["sql"] or "drafts_draft" in q["sql"]]


@BODIES
def test_a_creation_whose_checks_pass_reads_nothing_before_its_one_write(api_client, owner, body):
    _owed(owner, usd="1.00", at=timezone.now())  # something owed, far below the cap
    with CaptureQueriesContext(connection) as capture:
        response = api_client.post("/api/v1/drafts", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert response.status_code == 201, response.json()
    statements = _reads_of_what_the_write_checks(capture)
    assert len(statements) == 1, statements
    assert statements[0].startswith("WITH allowed AS (SELECT 1 WHERE NOT EXISTS")
    assert "fees_accruedfee" in statements[0] and 'INSERT INTO "drafts_draft"' in statements[0]
    assert ('"drafts_draft"."amount_base_units" >=' in statements[0]) == ("fiatAmount" in body)  # the held-amount check
    assert _written(owner) == (1, 1, 1)


def test_an_amount_another_account_holds_is_nudged_past_and_written_once(
    api_client, owner, other_account, client_with_scopes
):
    theirs = client_with_scopes("drafts:write", user=other_account).post("/api/v1/drafts", FIAT, format="json")
    first = api_client.post("/api/v1/drafts", FIAT, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201
    assert first.json()["amountSats"] == theirs.json()["amountSats"] + 1
    assert _written(owner) == (1, 1, 1)
    replay = api_client.post("/api/v1/drafts", FIAT, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert replay.content == first.content and replay["Idempotent-Replayed"] == "true"
    assert _written(owner) == (1, 1, 1)


@BODIES
def test_the_sum_owed_blocks_at_the_cap_and_not_a_cent_below(api_client, owner, settings, body):
    _owed(owner, usd="10.00", at=timezone.now())
    _owed(owner, usd="14.995", at=timezone.now())
    settings.FEE_MAX_OUTSTANDING_USD = Decimal("24.995")  # exactly what is owed: blocked
    refused = api_client.post("/api/v1/drafts", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert refused.status_code == 402, refused.json()
    assert refused.json()["code"] == "fees_outstanding" and refused.json()["outstandingUsd"] == 24.995
    assert _written(owner) == (0, 0, 1)  # only the key's record of the refusal
    assert IdempotencyKey.objects.get(user=owner).response_status == 402

    settings.FEE_MAX_OUTSTANDING_USD = Decimal("24.996")
    assert api_client.post("/api/v1/drafts", body, format="json").status_code == 201
    assert _written(owner) == (1, 1, 1)


@BODIES
def test_an_entry_owed_for_the_maximum_age_blocks_and_one_a_second_younger_does_not(api_client, owner, settings, body):
    settings.FEE_MAX_AGE_DAYS = 30
    with time_machine.travel(timezone.now(), tick=False):
        entry = _owed(owner, usd="0.10", at=timezone.now() - timedelta(days=30))
        refused = api_client.post("/api/v1/drafts", body, format="json")
        assert refused.status_code == 402, refused.json()
        assert _written(owner) == (0, 0, 0)

        AccruedFee.objects.filter(pk=entry.pk).update(accrued_at=entry.accrued_at + timedelta(seconds=1))
        assert api_client.post("/api/v1/drafts", body, format="json").status_code == 201
        assert _written(owner) == (1, 1, 0)


@BODIES
def test_settled_or_another_accounts_fees_do_not_block(api_client, owner, other_account, settings, body):
    settings.FEE_MAX_OUTSTANDING_USD = Decimal("1")
    _owed(other_account, usd="5.00", at=timezone.now() - timedelta(days=90))
    settled = _owed(owner, usd="5.00", at=timezone.now() - timedelta(days=90))
    AccruedFee.objects.filter(pk=settled.pk).update(status=AccruedFee.Status.SETTLED)
    assert api_client.post("/api/v1/drafts", body, format="json").status_code == 201

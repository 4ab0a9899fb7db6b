"""Refunds made before they carried a mode take their draft's: a refund of a test draft is a
test refund once migrated."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tests.drafts.conftest import ADDRESSES
from tests.factories import make_draft

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("refunds", "0001_refunds")]
AFTER = [("refunds", "0002_refund_livemode")]


@pytest.fixture(autouse=True)
def _back_to_the_latest_migrations():
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_existing_refunds_take_their_drafts_mode(owner):
    live = make_draft(owner, status="Confirmed")
    test = make_draft(
        owner, status="Confirmed", livemode=False, network="Sepolia", receiver_address=ADDRESSES["Sepolia"]
    )
    old = _migrate(BEFORE)
    Refund = old.get_model("refunds", "Refund")
    common = {"user_id": owner.pk, "currency": "USDC", "amount_base_units": 1_000, "share_base_units": 1_000,
              "expires_at": timezone.now() + timedelta(days=1)}  # fmt: skip
    Refund.objects.create(draft_id=live.id, token="live-token", network="Ethereum", **common)
    Refund.objects.create(draft_id=test.id, token="test-token", network="Mainnet", **common)  # as the old code allowed

    new = _migrate(AFTER)
    modes = dict(new.get_model("refunds", "Refund").objects.values_list("token", "livemode"))
    assert modes == {"live-token": True, "test-token": False}

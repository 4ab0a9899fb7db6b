"""Webhook delivery on the embedded default (SQLite): the statements that only PostgreSQL
runs (leasing batches, the one-statement success) have their plain counterparts there."""

from __future__ import annotations

from tests.sqlite import run_on_sqlite


def test_events_are_delivered_and_every_attempt_recorded_on_sqlite(tmp_path):
    outcome = run_on_sqlite("tests.webhooks.sqlite_delivery", tmp_path, OUTBOUND_ALLOW_LOOPBACK="true")
    assert outcome["received"] == 2 and outcome["made"] == 2
    assert outcome["deliveries"] == ["Succeeded", "Succeeded"]
    assert outcome["attempts"] == [["Done", 200], ["Done", 200]]


def test_a_lane_with_more_due_than_the_endpoint_cap_goes_on_one_attempt_at_a_time_on_sqlite(tmp_path):
    """5 due deliveries, 2 in flight at most: each lane, after a success, claims the next one by
    one; it never tries PostgreSQL's batch lease (which failed the task with a syntax error)."""
    outcome = run_on_sqlite("tests.webhooks.sqlite_delivery", tmp_path, OUTBOUND_ALLOW_LOOPBACK="true", EVENTS="5")
    assert outcome["received"] == 5 and outcome["made"] == 5
    assert outcome["deliveries"] == ["Succeeded"] * 5

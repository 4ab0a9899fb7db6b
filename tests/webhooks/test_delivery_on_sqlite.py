"""Webhook delivery on the embedded default (SQLite): the statements that only PostgreSQL
runs (leasing batches, the one-statement success) have their plain counterparts there."""

from __future__ import annotations

from tests.sqlite import run_on_sqlite


def test_events_are_delivered_and_every_attempt_recorded_on_sqlite(tmp_path):
    outcome = run_on_sqlite("tests.webhooks.sqlite_delivery", tmp_path, OUTBOUND_ALLOW_LOOPBACK="true")
    assert outcome["received"] == 2 and outcome["made"] == 2
    assert outcome["deliveries"] == ["Succeeded", "Succeeded"]
    assert outcome["attempts"] == [["Done", 200], ["Done", 200]]


def test_one_accounts_backlog_at_a_refusing_endpoint_does_not_hold_up_anothers_delivery_on_sqlite(tmp_path):
    outcome = run_on_sqlite("tests.webhooks.sqlite_fairness", tmp_path, OUTBOUND_ALLOW_LOOPBACK="true")
    # The first tick delivers the other account's event, although 250 refused ones are older.
    assert outcome["received"] == ["b1"]
    assert outcome["refusing_attempts"] == 2 and outcome["refused"] == [None]  # its cap, no answer
    assert outcome["attempts"] == 3


def test_a_lane_whose_endpoint_answers_again_goes_on_one_attempt_at_a_time_on_sqlite(tmp_path):
    outcome = run_on_sqlite(
        "tests.webhooks.sqlite_lane_recovery",
        tmp_path,
        OUTBOUND_ALLOW_LOOPBACK="true",
        WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT="1",
    )
    # Unhealthy (a 500), then healthy again: the lane makes the rest without PostgreSQL's batch lease.
    assert outcome["made"] == 4 and outcome["received"] == ["d0", "d1", "d2", "d3"]
    assert outcome["deliveries"] == ["Pending", "Succeeded", "Succeeded", "Succeeded"]  # d0 retries later
    assert outcome["attempts"] == [["Done", 200], ["Done", 200], ["Done", 200], ["Done", 500]]
    assert outcome["failing"] is False


def test_a_lane_with_more_due_than_the_endpoint_cap_goes_on_one_attempt_at_a_time_on_sqlite(tmp_path):
    """5 due deliveries, 2 in flight at most: each lane, after a success, claims the next one by
    one; it never tries PostgreSQL's batch lease (which failed the task with a syntax error)."""
    outcome = run_on_sqlite("tests.webhooks.sqlite_delivery", tmp_path, OUTBOUND_ALLOW_LOOPBACK="true", EVENTS="5")
    assert outcome["received"] == 5 and outcome["made"] == 5
    assert outcome["deliveries"] == ["Succeeded"] * 5


def test_a_pass_sends_an_endpoints_next_delivery_as_soon_as_the_last_succeeded_on_sqlite(tmp_path):
    """Without PostgreSQL's lanes an endpoint gets one request at a time; the next is claimed
    when the last one's success is recorded, not at the pass's next claim round (POLL_SECONDS):
    `make run` delivered about 5 webhooks a second to an endpoint, 514 in 70 s after a burst.
    Claim rounds 3 s apart in a pass claiming for 2 s: one round, and all ten delivered."""
    outcome = run_on_sqlite(
        "tests.webhooks.sqlite_delivery",
        tmp_path,
        OUTBOUND_ALLOW_LOOPBACK="true",
        EVENTS="10",
        PASS_SECONDS="2",
        POLL_SECONDS="3",
    )
    assert outcome["received"] == 10 and outcome["made"] == 10
    assert outcome["deliveries"] == ["Succeeded"] * 10

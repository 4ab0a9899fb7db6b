"""Every fiat-priced creation reads the open amounts just above its own to the same address
(the unique-amount nudge). That look-up must stay one short range however many drafts the
address has had: a merchant with one receiving address and years of paid drafts would
otherwise pay for all of them on every creation."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from drafts.amounts import _OPEN_AMOUNTS_NEAR
from drafts.models import Draft, DraftStatus
from tests.factories import make_draft

pytestmark = pytest.mark.django_db

ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"
LOW, HIGH = 25_000_000, 25_000_100


@pytest.fixture(scope="module", autouse=True)
def _no_dead_rows(django_db_setup, django_db_blocker):
    """Plans are read here: earlier tests of this worker that committed were emptied by DELETE
    (tests/flush.py), leaving dead rows and index entries that sway the planner. Vacuumed first,
    outside any test's transaction."""
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE drafts_draft")


def _plan_nodes(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from _plan_nodes(child)


def test_the_open_amounts_look_up_reads_only_open_drafts_even_as_a_prepared_statement(owner):
    template = make_draft(owner, receiver_address=ADDRESS, amount_base_units=LOW, status=DraftStatus.CONFIRMED)
    fields = {f.attname: getattr(template, f.attname) for f in Draft._meta.concrete_fields if not f.primary_key}
    settled = [DraftStatus.CONFIRMED, DraftStatus.EXPIRED, DraftStatus.CANCELLED]
    Draft.objects.bulk_create(
        Draft(**{**fields, "amount_base_units": LOW + n % 100, "status": settled[n % 3]}) for n in range(600)
    )
    # Other merchants' open drafts, as on any running service: read by status alone, the
    # look-up would pass over every one of them.
    Draft.objects.bulk_create(
        Draft(**{**fields, "receiver_address": f"0x{n:040x}", "status": DraftStatus.PENDING}) for n in range(400)
    )
    for amount in (LOW, LOW + 1, LOW + 7, HIGH + 1):
        make_draft(owner, receiver_address=ADDRESS, amount_base_units=amount)

    values = ("Ethereum", ADDRESS, "USDC", LOW, HIGH)
    assert sorted(a for (a,) in _OPEN_AMOUNTS_NEAR.rows(*values)) == [LOW, LOW + 1, LOW + 7]

    # As PostgreSQL runs it once psycopg has prepared it: one plan for every set of values.
    sql, params = _OPEN_AMOUNTS_NEAR.statement(connection, values)
    assert len(params) == len(values), "the open statuses are part of the statement, not values"
    numbered = iter(range(1, len(params) + 1))
    prepared = re.sub("%s", lambda _: f"${next(numbered)}", sql)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE drafts_draft")
        cursor.execute("SET plan_cache_mode = force_generic_plan")
        try:
            cursor.execute(f"PREPARE open_amounts AS {prepared}")
            cursor.execute(
                f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE open_amounts('Ethereum', '{ADDRESS}', 'USDC', {LOW}, {HIGH})"
            )
            plan = cursor.fetchone()[0]
            plan = plan[0]["Plan"] if isinstance(plan, list) else plan
        finally:
            cursor.execute("DEALLOCATE ALL")
            cursor.execute("RESET plan_cache_mode")
    nodes = list(_plan_nodes(plan))
    assert plan["Actual Rows"] == 3
    passed_over = sum(n.get("Rows Removed by Filter", 0) + n.get("Rows Removed by Index Recheck", 0) for n in nodes)
    assert passed_over == 0, f"the look-up read drafts outside its range: {plan}"
    assert not any(n["Node Type"] == "Seq Scan" for n in nodes), plan


def test_the_held_amounts_look_up_reads_the_held_drafts_index_not_the_table(owner):
    from datetime import timedelta

    from django.utils import timezone

    from drafts.amounts import _HELD_AMOUNTS_NEAR

    now = timezone.now()
    template = make_draft(owner, receiver_address=ADDRESS, amount_base_units=LOW, status=DraftStatus.CONFIRMED)
    fields = {f.attname: getattr(template, f.attname) for f in Draft._meta.concrete_fields if not f.primary_key}
    # Years of closed drafts: most never held (before the rule) or held long ago, a few held now.
    Draft.objects.bulk_create(
        Draft(
            **{
                **fields,
                "amount_base_units": LOW + n % 100,
                "amount_held_until": None if n % 2 else now - timedelta(days=1 + n),
            }
        )
        for n in range(600)
    )
    for amount in (LOW + 3, LOW + 9, HIGH + 1):
        make_draft(
            owner,
            receiver_address=ADDRESS,
            amount_base_units=amount,
            status=DraftStatus.CANCELLED,
            amount_held_until=now + timedelta(days=3),
        )

    values = ("Ethereum", ADDRESS, "USDC", LOW, HIGH, now)
    assert sorted(a for (a,) in _HELD_AMOUNTS_NEAR.rows(*values)) == [LOW + 3, LOW + 9]

    sql, params = _HELD_AMOUNTS_NEAR.statement(connection, values)
    numbered = iter(range(1, len(params) + 1))
    prepared = re.sub("%s", lambda _: f"${next(numbered)}", sql)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE drafts_draft")
        cursor.execute("SET plan_cache_mode = force_generic_plan")
        try:
            cursor.execute(f"PREPARE held_amounts AS {prepared}")
            cursor.execute(
                "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE held_amounts"
                f"('Ethereum', '{ADDRESS}', 'USDC', {LOW}, {HIGH}, '{now.isoformat()}')"
            )
            plan = cursor.fetchone()[0]
            plan = plan[0]["Plan"] if isinstance(plan, list) else plan
        finally:
            cursor.execute("DEALLOCATE ALL")
            cursor.execute("RESET plan_cache_mode")
    nodes = list(_plan_nodes(plan))
    assert plan["Actual Rows"] == 2
    assert not any(n["Node Type"] == "Seq Scan" for n in nodes), plan
    assert any(n.get("Index Name") == "draft_held_amounts" for n in nodes), plan
    removed = sum(n.get("Rows Removed by Filter", 0) + n.get("Rows Removed by Index Recheck", 0) for n in nodes)
    assert removed == 0, f"the look-up read the table for drafts that hold nothing: {plan}"

"""Two reads the ten-million-draft bench (bench/scale_bench.py) found passing over rows, read
here as PostgreSQL runs them on an account with many open drafts: a page after a cursor deep in
the list, and the needs-attention list's drafts. Each must read about what it returns, however
many drafts come before the cursor or wait open."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import User
from attention.selectors import attention_of
from drafts.enums import DraftStatus
from drafts.models import Draft
from tests.factories import make_draft

pytestmark = pytest.mark.django_db

MANY = 600
OTHERS = 20_000
ACCOUNT = 5_000


@pytest.fixture(scope="module", autouse=True)
def _no_dead_rows(django_db_setup, django_db_blocker):
    """Plans are read here: rows earlier tests of this worker deleted would sway the planner."""
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE drafts_draft")


def _many_open_drafts(owner) -> list[Draft]:
    """The account's MANY open drafts (a minute apart, newest first) in a table that also holds
    OTHERS older drafts of another account, as a real one does: with the account's drafts alone
    in a small table, reading all of it and sorting is rightly the planner's cheapest plan (and
    was chosen now and then)."""
    others = User.objects.create_user("others@example.com", "a long enough passphrase")
    _copies(
        make_draft(others, amount_base_units=9_000_000),
        OTHERS,
        amount_base_units="9000001 + g",
        memo="'order ' || g",
        order_id="'order-' || g",
        created_at="created_at - interval '30 days' - g * interval '1 minute'",  # an older business
    )
    template = make_draft(owner, amount_base_units=1_000_000)
    _copies(
        template,
        MANY,
        amount_base_units="1000001 + g",
        created_at="created_at + interval '1 second' - g * interval '1 minute'",
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE drafts_draft")
    return list(Draft.objects.filter(user=owner).order_by("-created_at", "-id"))


def _copies(template: Draft, n: int, **sql: str) -> None:
    """`n` copies of `template` in one INSERT ... SELECT over generate_series (numbered g from
    0), the columns named in `sql` given as SQL expressions of g: thousands of rows in
    milliseconds, where bulk_create builds each one in Python."""
    columns = [f.column for f in Draft._meta.concrete_fields if not f.primary_key]
    pk = Draft._meta.pk.column
    values = [sql.pop(c, connection.ops.quote_name(c)) for c in columns]
    assert not sql, sql  # every expression names a column
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {Draft._meta.db_table} ({pk}, {', '.join(map(connection.ops.quote_name, columns))}) "
            f"SELECT gen_random_uuid(), {', '.join(values)} FROM {Draft._meta.db_table}, "
            f"generate_series(0, %s - 1) AS g WHERE {pk} = %s",
            [n, template.pk],
        )


def _passed_over(sql: str) -> int:
    """Rows the statement read and threw away (its scans' filters and rechecks), as EXPLAIN
    ANALYZE counts them."""
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
        plan = cursor.fetchone()[0]
    plan = plan[0]["Plan"] if isinstance(plan, list) else plan

    def nodes(node: dict):
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    return sum(n.get("Rows Removed by Filter", 0) + n.get("Rows Removed by Index Recheck", 0) for n in nodes(plan))


def test_a_page_after_a_cursor_deep_in_the_list_reads_from_the_cursor_on(api_client, owner):
    drafts = _many_open_drafts(owner)
    cursor = drafts[300]

    with CaptureQueriesContext(connection) as queries:
        page = api_client.get(f"/api/v1/drafts?startingAfter={cursor.id}&limit=20")
    assert page.status_code == 200
    assert [item["id"] for item in page.json()["items"]] == [str(d.id) for d in drafts[301:321]]

    (listing,) = [q["sql"] for q in queries.captured_queries if "ORDER BY" in q["sql"] and "LIMIT 21" in q["sql"]]
    assert _passed_over(listing) <= 1, listing  # not the 300 drafts before the cursor


def test_the_attention_lists_drafts_read_the_reverted_ones_not_every_open_draft(owner):
    drafts = _many_open_drafts(owner)
    reverted = drafts[7]
    Draft.objects.filter(pk=reverted.pk).update(payment_reverted_at=timezone.now())
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE drafts_draft")

    with CaptureQueriesContext(connection) as queries:
        attention = attention_of(owner)
    assert [item.id for item in attention.items] == [str(reverted.id)]

    (listing,) = [q["sql"] for q in queries.captured_queries if 'FROM "drafts_draft"' in q["sql"]]
    assert _passed_over(listing) <= 1, listing  # not the account's 600 open drafts
    assert Draft.objects.filter(user=owner, status=DraftStatus.PENDING).count() == MANY + 1


def test_a_list_filtered_by_network_and_currency_reads_and_counts_only_those_drafts(api_client, owner):
    _many_open_drafts(owner)
    template = make_draft(owner, network="Base", amount_base_units=5_000_000)
    fields = {f.attname: getattr(template, f.attname) for f in Draft._meta.concrete_fields if not f.primary_key}
    Draft.objects.bulk_create(Draft(**{**fields, "amount_base_units": 5_000_001 + n}) for n in range(20))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE drafts_draft")

    with CaptureQueriesContext(connection) as queries:
        page = api_client.get("/api/v1/drafts?network=Base&currency=USDC&limit=20")
    assert page.status_code == 200 and page.json()["total"] == 21
    assert {item["network"] for item in page.json()["items"]} == {"Base"}

    reads = [q["sql"] for q in queries.captured_queries if 'FROM "drafts_draft"' in q["sql"]]
    assert len(reads) == 2  # the page and its total
    for sql in reads:
        assert _passed_over(sql) == 0, sql  # not the account's 600 Ethereum drafts


def test_a_search_reads_the_drafts_it_finds_and_at_most_the_newest_memos(api_client, owner, settings):
    settings.DRAFT_SEARCH_MEMO_WITHIN = 100  # memos read among the account's newest 100
    drafts = _many_open_drafts(owner)  # newest first; other accounts' drafts have memos "order 0" on
    # And older ones: the account has 5,000 drafts, numbered newest first in their memos.
    _copies(
        drafts[-1],
        ACCOUNT - MANY,
        amount_base_units="2000001 + g",
        created_at="created_at - (g + 1) * interval '1 minute'",
    )
    table, pk, user = Draft._meta.db_table, Draft._meta.pk.column, Draft._meta.get_field("user").column
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS d SET memo = 'order ' || r.n, order_id = 'order-' || r.n "
            f"FROM (SELECT {pk}, row_number() OVER (ORDER BY created_at DESC, {pk} DESC) - 1 AS n "
            f"FROM {table} WHERE {user} = %s) AS r WHERE d.{pk} = r.{pk}",
            [owner.pk],
        )
    drafts = list(Draft.objects.filter(user=owner).order_by("-created_at", "-id"))
    assert len(drafts) == ACCOUNT + 1 and drafts[42].memo == "order 42"
    Draft.objects.filter(pk=drafts[400].pk).update(paid_tx_id="0xAbCd" + "e" * 60)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE drafts_draft")

    searches = {
        "ORDER 42": {"order 42"},  # a memo among the newest 100 contains it (any case); "order 420" is older
        "order-7": {"order 7"},  # the order id
        "order-450": {"order 450"},  # an order id of any age
        "0xabcd" + "E" * 60: {"order 400"},  # the payment's transaction, any case
        str(drafts[500].id): {"order 500"},
    }
    for q, memos in searches.items():
        with CaptureQueriesContext(connection) as queries:
            page = api_client.get("/api/v1/drafts", {"q": q, "limit": 20})
        assert page.status_code == 200
        assert {item["memo"] for item in page.json()["items"]} == memos, q

        (listing,) = [s["sql"] for s in queries.captured_queries if "ORDER BY" in s["sql"] and "LIMIT 21" in s["sql"]]
        # Not the account's 5,000 drafts: the newest 100 memos at most, and the rows an exact
        # branch found in other accounts (their "order-450").
        assert _passed_over(listing) <= 105, (q, listing)

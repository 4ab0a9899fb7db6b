"""core.sql.rows builds an INSERT's parameters faster than the ORM, and must send the same ones."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone
from psycopg.adapt import PyFormat
from psycopg.types.json import Jsonb

from core.sql.rows import RowInserter
from core.sql.values import json_bytes
from drafts.enums import DraftStatus
from drafts.models import Draft, IdempotencyKey
from payments.enums import Currency, FeePlacement, Method, Network
from tests.factories import make_draft
from webhooks.models import DeliveryStatus, Event, EventType

pytestmark = pytest.mark.django_db


def _as_the_orm_prepares(instance) -> dict[str, object]:
    return {
        field.attname: field.get_db_prep_save(field.pre_save(instance, True), connection)
        for field in instance._meta.concrete_fields
    }


def _comparable(value):
    return ("jsonb", value.obj) if isinstance(value, Jsonb) else (type(value), value)


def _assert_sent_as_the_orm_would(instance) -> None:
    model = type(instance)
    params = RowInserter(model).values(connection, instance)
    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and getattr(f, "db_returning", False))]
    expected = _as_the_orm_prepares(instance)
    assert len(params) == len(fields)
    for field, sent in zip(fields, params, strict=True):
        if getattr(field, "auto_now", False):  # set anew on each pre_save: a time, just taken
            assert isinstance(sent, datetime) and sent.tzinfo is not None
            continue
        assert _comparable(sent) == _comparable(expected[field.attname]), field.attname


def test_an_insert_sends_exactly_the_values_the_orm_would(owner):
    draft = make_draft(owner, memo="plain text", quote_locked_at=timezone.now(), sek="sek-1", is_fee_settlement=True)
    _assert_sent_as_the_orm_would(draft)
    _assert_sent_as_the_orm_would(Event(user=owner, type="draft.created", data={"a": 1}, draft_id=draft.id))
    # TextChoices members, as a creation gives them (a str subclass goes as it is, as to_python keeps it)
    draft.status, draft.network, draft.method = DraftStatus.PENDING, Network.BASE, Method.SINGLE_OUTPUT
    _assert_sent_as_the_orm_would(draft)
    _assert_sent_as_the_orm_would(Event(user=owner, type=EventType.DRAFT_CREATED, data={}, draft_id=draft.id))


@pytest.mark.filterwarnings("ignore:DateTimeField .* received a naive datetime")
def test_values_the_database_cannot_take_as_they_are_are_still_prepared(owner):
    """A UUID given as text and a naive datetime go the ORM's way, not straight through."""
    draft = make_draft(owner)
    draft.id = str(draft.id)
    draft.quote_locked_at = datetime(2026, 1, 2, 3, 4, 5)  # noqa: DTZ001 (naive on purpose)
    _assert_sent_as_the_orm_would(draft)


def test_a_row_refused_by_its_conflict_stops_the_rows_after_it_and_the_read(owner):
    """insert_then_fetch: the idempotency key first, then the event; a key already taken
    writes neither, on every database (on PostgreSQL within the one statement)."""
    from core.sql.rows import RowReader, insert_then_fetch
    from drafts.models import IdempotencyKey
    from webhooks.models import Webhook

    Webhook.objects.create(user=owner, url="https://hooks.example.com/a", secret="s")
    key_insert = RowInserter(IdempotencyKey, on_conflict=["user", "key"])
    endpoints = RowReader(Webhook, by=["user"])

    def attempt(n: int):
        answer = f'{{"n": {n}}}'
        key = IdempotencyKey(user=owner, key="k-1", request_hash="h", response_status=201, response_body=answer)
        event = Event(user=owner, type="draft.created", data={"n": n})
        read = insert_then_fetch([(key_insert, key), (RowInserter(Event), event)], endpoints, owner.pk)
        return key, event, read

    key, event, read = attempt(1)
    assert not key._state.adding and not event._state.adding and len(read) == 1
    key, event, read = attempt(2)
    assert key._state.adding and event._state.adding and read == []
    assert list(Event.objects.values_list("data", flat=True)) == [{"n": 1}]
    assert IdempotencyKey.objects.get().response_body == '{"n": 1}'


def test_a_write_refused_by_a_read_that_finds_a_row_writes_nothing(owner, other_account):
    """insert_then_fetch `unless`: the reads are checked in the write's own statement; any row
    found refuses every INSERT of it (WriteRefused), none found lets all of them through."""
    from core.sql.rows import RowReader, Select, WriteRefused, insert_then_fetch
    from drafts.models import Draft
    from webhooks.models import Webhook

    Webhook.objects.create(user=owner, url="https://hooks.example.com/a", secret="s")
    key_insert = RowInserter(IdempotencyKey, on_conflict=["user", "key"])
    endpoints = RowReader(Webhook, by=["user"])
    amounts = Select(Draft, columns=["id"], where=[("user", "="), ("amount_base_units", "=")])
    many = Select(Draft, columns=[("count", "id")], where=[("user", "=")], having=(("count", "id"), ">="))
    owed = Select(Draft, columns=[("count", "id")], where=[("user", "=")], having=(("sum", "fee_base_units"), ">="))
    make_draft(owner, amount_base_units=7, fee_base_units=40)
    make_draft(owner, amount_base_units=8, fee_base_units=60)

    def attempt(key: str, *unless):
        row = IdempotencyKey(user=owner, key=key, request_hash="h", response_status=201, response_body="{}")
        event = Event(user=owner, type="draft.created", data={"key": key})
        try:
            read = insert_then_fetch(
                [(key_insert, row), (RowInserter(Event), event)], endpoints, owner.pk, unless=unless
            )
        except WriteRefused:
            assert row._state.adding and event._state.adding
            return None
        assert not row._state.adding and not event._state.adding and len(read) == 1
        return key

    refusing = [(amounts, (owner.pk, 7)), (many, (owner.pk, 2)), (owed, (owner.pk, 100)), (owed, (owner.pk, 0))]
    passing = [
        (amounts, (owner.pk, 9)),
        (amounts, (other_account.pk, 7)),
        (many, (owner.pk, 3)),
        (owed, (owner.pk, 101)),
    ]
    passing += [(owed, (other_account.pk, 1))]  # the sum of no rows is 0
    for n, check in enumerate(refusing):
        assert attempt(f"no-{n}", check) is None
        assert attempt(f"no-with-{n}", *passing, check) is None
    assert attempt("yes", *passing) == "yes"
    assert attempt("none") == "none"
    assert sorted(IdempotencyKey.objects.values_list("key", flat=True)) == ["none", "yes"]
    assert sorted(e["key"] for e in Event.objects.values_list("data", flat=True)) == ["none", "yes"]


def test_reads_sent_together_give_each_the_rows_it_gives_alone(owner, other_account):
    from core.sql.rows import Select, rows_together
    from drafts.models import Draft

    amounts = Select(Draft, columns=["amount_base_units", "created_at"], where=[("user", "=")])
    totals = Select(
        Draft, columns=[("sum", "amount_base_units"), ("min", "created_at"), ("count", "id")], where=[("user", "=")]
    )
    for amount in (25_000_000, 25_000_001, 7):
        make_draft(owner, amount_base_units=amount)

    for user in (owner, other_account):  # some rows, then none
        alone = [totals.rows(user.pk), amounts.rows(user.pk)]
        together = rows_together((totals, (user.pk,)), (amounts, (user.pk,)))
        assert [sorted(rows) for rows in together] == [sorted(rows) for rows in alone]
    assert rows_together((totals, (owner.pk,)), (amounts, (owner.pk,)))[0] == [
        (50_000_008, totals.rows(owner.pk)[0][1], 3)
    ]


def test_our_text_choices_are_dumped_by_the_dumpers_of_str_found_without_walking_their_classes():
    connection.ensure_connection()
    adapters = connection.connection.adapters
    ours = (Network, Currency, Method, FeePlacement, DraftStatus, IdempotencyKey.State, EventType, DeliveryStatus)
    for choices in ours:
        for fmt in PyFormat:
            assert adapters.get_dumper(choices, fmt) is adapters.get_dumper(str, fmt), (choices, fmt)
            # registered for the class itself (core.sql.driver): a new cursor finds it at once
            assert choices in adapters._dumpers[fmt], (choices, fmt)


# --- JSON values: encoded by orjson, as json.dumps would ----------------------------------------

JSON_VALUES = [
    {"feeUsd": 2.22887324, "waived": False, "percent": 0.09, "feeAmount": "2.229320", "feeBaseUnits": 2229320},
    {"fx": {"rate": "0.852", "sources": [{"asOf": "2025-10-01T00:00:00Z", "used": True}]}, "live": False},
    {"memo": 'Café ☕ — ünïcödé \u2028 "quoted" \\ back', "tiny": 1e-7, "huge": 1e300, "neg": -0.5, "none": None},
    {"status": DraftStatus.PENDING, "currency": Currency.USDC, "nested": [[], {}, [1, [2, [3]]]]},
    [],
    ["0x" + "ab" * 20, 12, 0.1 + 0.2],
    "text",
    0,
]


@pytest.mark.parametrize("value", JSON_VALUES)
def test_a_json_value_is_encoded_as_json_dumps_encodes_it(value):
    encoded = json_bytes(value)

    assert json.loads(encoded) == json.loads(json.dumps(value))


@pytest.mark.parametrize(
    "value",
    [{"big": 2**70}, {1: "integer key"}, {(1, 2): "refused by both"}, {"at": timezone.now()}, {"d": Decimal("1.5")}],
)
def test_what_orjson_writes_differently_goes_to_json_dumps(value):
    try:
        expected = json.dumps(value).encode()
    except TypeError:
        with pytest.raises(TypeError):
            json_bytes(value)
    else:
        assert json_bytes(value) == expected


@pytest.mark.parametrize("value", JSON_VALUES[:4])
def test_a_json_column_reads_back_what_the_orm_would_have_stored(owner, value):
    ours = Event(user=owner, type="draft.created", data=value)
    RowInserter(Event).insert(ours)
    theirs = Event.objects.create(user=owner, type="draft.created", data=value)

    assert Event.objects.get(pk=ours.pk).data == Event.objects.get(pk=theirs.pk).data


def _stored(instance) -> dict[str, object]:
    row = type(instance).objects.filter(pk=instance.pk).values().get()
    return {name: value for name, value in row.items() if name not in ("id",)}


def test_a_row_inserted_reads_back_as_the_orm_would_have_stored_it(owner):
    """On PostgreSQL the row goes as one jsonb parameter: every column type reads it back as
    the ORM's own INSERT would have stored it (text, TextChoices, decimals, integers, times,
    UUIDs, JSON, booleans and NULLs)."""
    at = timezone.now()
    values = {
        "memo": 'quote " and \\ backslash, ünïcode',
        "quote_locked_at": at,
        "expires_at": at,
        "sek": {"amount": 121.62, "rate": 9.418116, "nested": [1, None, "x"]},
        "is_fee_settlement": True,
        "fiat_amount": Decimal("11.00000001"),
        "amount_base_units": 2**62,
        "status": DraftStatus.PENDING,
        "network": Network.BASE,
        "fee_placement": FeePlacement.ACCRUED,
        "paid_tx_ids": [],
    }
    ours, theirs = make_draft(owner, **values), make_draft(owner, **{**values, "amount_base_units": 2**62 - 1})
    Draft.objects.filter(pk__in=[ours.pk, theirs.pk]).delete()
    ours.created_at = theirs.created_at = at
    RowInserter(Draft).insert(ours)
    theirs.save(force_insert=True)
    differ = ("amount_base_units", "updated_at")  # its own amount (one open draft per amount); a time just taken
    assert {k: v for k, v in _stored(ours).items() if k not in differ} == {
        k: v for k, v in _stored(theirs).items() if k not in differ
    }
    assert _stored(ours)["amount_base_units"] == 2**62 and _stored(ours)["sek"] == values["sek"]
    event = Event(user=owner, type=EventType.DRAFT_CREATED, data={"a": [1, 2.5, None]}, draft_id=ours.id)
    RowInserter(Event).insert(event)
    assert _stored(event)["data"] == {"a": [1, 2.5, None]} and _stored(event)["type"] == "draft.created"

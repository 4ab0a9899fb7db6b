"""config.rows builds an INSERT's parameters faster than the ORM, and must send the same ones."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.db import connection
from django.utils import timezone
from psycopg.types.json import Jsonb

from config.rows import RowInserter
from tests.factories import make_draft
from webhooks.models import Event

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
    sql, params, _ = RowInserter(model).statement(connection, instance)
    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and getattr(f, "db_returning", False))]
    expected = _as_the_orm_prepares(instance)
    assert len(params) == len(fields) == sql.count("%s")
    for field, sent in zip(fields, params, strict=True):
        if getattr(field, "auto_now", False):  # set anew on each pre_save: a time, just taken
            assert isinstance(sent, datetime) and sent.tzinfo is not None
            continue
        assert _comparable(sent) == _comparable(expected[field.attname]), field.attname


def test_an_insert_sends_exactly_the_values_the_orm_would(owner):
    draft = make_draft(owner, memo="plain text", quote_locked_at=timezone.now(), sek="sek-1", is_fee_settlement=True)
    _assert_sent_as_the_orm_would(draft)
    _assert_sent_as_the_orm_would(Event(user=owner, type="draft.created", data={"a": 1}, draft_id=draft.id))


@pytest.mark.filterwarnings("ignore:DateTimeField .* received a naive datetime")
def test_values_the_database_cannot_take_as_they_are_are_still_prepared(owner):
    """A UUID given as text and a naive datetime go the ORM's way, not straight through."""
    draft = make_draft(owner)
    draft.id = str(draft.id)
    draft.quote_locked_at = datetime(2026, 1, 2, 3, 4, 5)  # noqa: DTZ001 (naive on purpose)
    _assert_sent_as_the_orm_would(draft)

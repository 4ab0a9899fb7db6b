"""How a model's values become an INSERT's parameters (what core.sql.rows.RowInserter may
skip of Django's preparation, field by field), and new instances built positionally."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar, cast

import orjson
from django.db.models import (
    BigIntegerField,
    BooleanField,
    CharField,
    DateTimeField,
    EmailField,
    Field,
    ForeignKey,
    IntegerField,
    JSONField,
    Model,
    PositiveBigIntegerField,
    PositiveIntegerField,
    PositiveSmallIntegerField,
    SlugField,
    SmallIntegerField,
    TextField,
    URLField,
    UUIDField,
)

_TEXT_FIELDS = (CharField, TextField, URLField, EmailField, SlugField)


def passed_as_is(field: Field[Any, Any], connection: Any) -> type | None:
    """The Python type whose values (and None) this field hands to the database unchanged, so
    an INSERT can skip its get_db_prep_save (a third of the cost of building a draft's 50
    parameters). Only Django's own field classes, exactly; None when every value is prepared.
    For the text fields, a `str` subclass too (statuses, networks...: TextChoices members),
    which their `to_python` gives back as it is. `JSON` marks a JSONField without an encoder
    on PostgreSQL: None as it is, any other value encoded by `json_bytes`."""
    kind = type(field)
    if kind in _TEXT_FIELDS:
        return str
    if kind is BooleanField:
        return bool
    if connection.vendor != "postgresql":  # elsewhere UUIDs and datetimes are turned into text
        return None
    if kind is JSONField and getattr(field, "encoder", None) is None:
        return JSON
    if kind is UUIDField:
        return uuid.UUID
    if kind is DateTimeField:  # auto_now or not: an INSERT keeps a time the caller gave
        return datetime  # aware ones only: a naive one gets Django's warning and conversion
    return None


_INTEGER_FIELDS = (
    IntegerField,
    BigIntegerField,
    SmallIntegerField,
    PositiveIntegerField,
    PositiveBigIntegerField,
    PositiveSmallIntegerField,
)


def integer_form(field: Field[Any, Any], connection: Any) -> type | None:
    """On PostgreSQL, the psycopg integer type an integer field's int is sent as (int2, int4 or
    int8 by the column's type, as Django's `adapt_integerfield_value` wraps it, so a prepared
    statement keeps its parameter types): wrapped here, Django's three calls a value skipped."""
    if type(field) in _INTEGER_FIELDS and connection.vendor == "postgresql":
        form: type | None = connection.ops.integerfield_type_map[field.get_internal_type()]  # psycopg's backend's
        return form
    return None


def row_json(columns: list[str], values: list[Any]) -> Any:  # a psycopg Jsonb
    """One row as one jsonb parameter, {column: value}, for `jsonb_populate_record`
    (core.sql.rows.RowInserter on PostgreSQL). The values are Django's prepared ones: a JSON
    column's value goes in as the JSON its field encodes, a Decimal as its exact text, a
    UUID, time or TextChoices member as orjson writes it (what the column's input reads)."""
    from psycopg.types.json import Jsonb

    return Jsonb(dict(zip(columns, values, strict=True)), dumps=_row_bytes)


def _row_bytes(row: dict[str, Any]) -> bytes:
    return orjson.dumps(row, default=_row_value)


def _row_value(value: Any) -> Any:
    from psycopg.types.json import Jsonb

    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Jsonb):  # a JSON column's value, as its field encodes it
        return orjson.Fragment(value.dumps(value.obj) if value.dumps else json.dumps(value.obj))
    raise TypeError(f"no JSON form for a column value of type {type(value).__name__}")


class JSON:
    """`passed_as_is` of a JSONField without an encoder on PostgreSQL: its value is encoded by
    orjson (`jsonb`), not passed as it is."""


def jsonb(value: Any) -> Any:  # a psycopg Jsonb
    from psycopg.types.json import Jsonb

    return Jsonb(value, dumps=json_bytes)


def json_bytes(value: Any) -> bytes:
    """The JSON text of a JSONField's value, as json.dumps writes it (Django's encoder when the
    field names none), by orjson: a fifth of the time. What orjson writes differently from
    json.dumps goes to json.dumps itself: what it refuses (integers beyond 64 bits, keys that are
    not strings) and dates, times and dataclasses (json.dumps refuses them). Left to orjson:
    a UUID (written as its string, where json.dumps refuses it) and NaN or infinite floats
    (null, where json.dumps writes NaN, which PostgreSQL refuses); the service stores neither."""
    try:
        return orjson.dumps(value, default=_not_orjsons, option=_JSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value).encode()


_JSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _not_orjsons(value: Any) -> Any:
    raise TypeError


_LAYOUTS: dict[type[Model], list[tuple[Any, ...]]] = {}


M = TypeVar("M", bound=Model)


def unsaved(model: type[M], **values: Any) -> M:
    """A new instance of `model`, unsaved, as `model(**values)` makes it: the fields not given
    take their defaults; a forward foreign key is given as its object (cached on the instance,
    as the ORM does) or as its `_id`. Built from positional arguments, in the model's field
    order, which Django's constructor takes in a quarter of the time it spends matching keyword
    arguments to fields (a draft's 53). Unlike `model(**values)` it accepts only fields, and
    does not check a related object's model."""
    layout = _LAYOUTS.get(model)
    if layout is None:
        layout = _LAYOUTS[model] = [
            (f.attname, f.name, f.target_field.attname if isinstance(f, ForeignKey) else None, f.get_default)
            for f in model._meta.concrete_fields
        ]
    args: list[Any] = []
    related: list[tuple[str, Any]] = []
    for attname, name, target, default in layout:
        if attname in values:
            args.append(values.pop(attname))
        elif target is not None and name in values:
            other = values.pop(name)
            related.append((name, other))
            args.append(None if other is None else getattr(other, target))
        else:
            args.append(default())
    if values:
        raise TypeError(f"{model.__name__} has no field {', '.join(sorted(values))}")
    instance = model(*args)
    for name, other in related:
        cast("ForeignKey[Any, Any]", model._meta.get_field(name)).set_cached_value(
            instance, other
        )  # a forward foreign key
    return instance

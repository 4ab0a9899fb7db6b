"""The API's JSON renderer (core/api/renderers.py) writes the JSON values DRF's renderer
writes, for every kind of value a body holds, and falls back on DRF where orjson refuses."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer

from core.api.renderers import JsonRenderer, encoded
from core.wire import json_number
from payments.enums import Network

BODIES = {
    "draft-like": {
        "id": str(uuid.uuid4()),
        "amountSats": 1608302881,
        "quote": {"rate": 0.8518296, "sources": [{"rate": "0.9998", "used": True}], "nudge": None},
        "memo": "caf\u00e9 \U0001f600",
        "paidTxIds": [],
    },
    "python values": {
        "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "decimal": Decimal("12.50"),
        "aware": datetime(2026, 11, 26, 8, 31, 15, 862275, tzinfo=UTC),
        "offset": datetime(2026, 11, 26, 8, 31, tzinfo=timezone(timedelta(hours=2))),
        "naive": datetime(2026, 11, 26, 8, 31, 15),
        "date": date(2026, 11, 26),
        "lazy": gettext_lazy("Not found."),
        "choice": Network.BASE,
        "tuple": (1, 2.5, "x"),
        "bytes": b"raw",
        "floats": [0.1, 1e-07, 1e16, 123456789.123],
    },
    "beyond orjson": {"wei": 2**70, 3: "an int key"},
    "line separators": {"text": "a\u2028b\u2029c"},
    "top-level list": [1, {"a": None}],
}


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_it_writes_what_drf_writes(body):
    ours, drf = JsonRenderer().render(body), JSONRenderer().render(body)
    assert json.loads(ours) == json.loads(drf)
    assert (b"\xe2\x80\xa8" in ours, b"\xe2\x80\xa9" in ours) == (False, False)


def test_line_separators_are_escaped_as_drf_escapes_them():
    assert JsonRenderer().render(BODIES["line separators"]) == b'{"text":"a\\u2028b\\u2029c"}'


def test_an_encoded_body_is_sent_as_it_is_unless_indented():
    body = encoded(BODIES["draft-like"])
    assert JsonRenderer().render(body) is body.content
    indented = JsonRenderer().render(body, "application/json; indent=2")
    assert indented.startswith(b'{\n  "id"') and json.loads(indented) == BODIES["draft-like"]


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "sNaN"])
def test_a_number_json_cannot_carry_is_refused_on_the_wire(value):
    with pytest.raises(ValueError, match="not a number JSON can carry"):
        json_number(Decimal(value))

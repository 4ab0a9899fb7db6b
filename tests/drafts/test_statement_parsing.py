"""A creation's SQL is parsed once per process, not once per request.

psycopg converts each statement's placeholders and caches the result, but leaves out
statements with more than 50 parameters; the creation's statement that writes the draft, its
event and reads the owner's webhooks has more. core.sql.rows raises that bound: parsing the
statement anew cost 8% of a creation's instructions. This test fails if a psycopg upgrade
drops the bound or a statement outgrows it.
"""

from __future__ import annotations

import pytest
from psycopg import _queries

from tests.drafts.conftest import ADDRESSES

pytestmark = pytest.mark.django_db


def test_once_warm_a_creation_converts_no_statement_anew(create, monkeypatch):
    def body(n: int) -> dict:
        return {
            "network": "Base",
            "currency": "USDC",
            "receiverAddress": ADDRESSES["Base"],
            "fiatCurrency": "EUR",
            "fiatAmount": 10 + n,
            "memo": f"parse {n}",
        }

    for n in range(2):  # the first creation builds and converts every statement
        assert create(body(n), HTTP_IDEMPOTENCY_KEY=f"parse-{n}").status_code == 201

    converted = []
    uncached = _queries._query2pg_nocache
    monkeypatch.setattr(
        _queries, "_query2pg_nocache", lambda query, encoding: converted.append(query) or uncached(query, encoding)
    )
    assert create(body(2), HTTP_IDEMPOTENCY_KEY="parse-2").status_code == 201
    assert converted == [], f"parsed again on every creation: {[q[:80] for q in converted]}"

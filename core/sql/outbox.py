"""The webhook outbox's hot statements (webhooks/lanes.py, webhooks.attempts.attempt_record),
each one round trip on PostgreSQL (FOR UPDATE SKIP LOCKED, data-modifying WITH queries).

Built once per process from the models and states the outbox gives (`Outbox`): every table
and column name comes from the models' metadata, and an attempt's INSERT writes every column
of the attempt's model (those it is not given take their defaults). Only where the database
has them (`core.sql.backend`): elsewhere the outbox goes one attempt at a time through the ORM.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import connections, router
from django.db.models import Model

from core.sql.built import BuiltOnce, run


@dataclass(frozen=True)
class OutboxShape:
    """The outbox's models and the states its statements name."""

    delivery: type[Model]  # fields webhook, event, status, attempt_count, total_attempts, next_attempt_at, ...
    attempt: type[Model]  # fields delivery, number, state, finished_at, status_code, ...
    endpoint: type[Model]  # fields active, last_failure_at, consecutive_failures, url, secret, ...
    event: type[Model]  # fields type, data, created_at, object_id, sequence
    pending: str  # a delivery waiting for its next attempt
    succeeded: str  # a delivery done
    open_attempts: tuple[str, ...]  # an attempt claimed or under way
    done: str  # an attempt with its result


class _Names:
    """A model's table and columns, quoted, under an alias: `n.table`, `n["field"]`, `n.bare("field")`."""

    def __init__(self, model: type[Model], connection: Any, alias: str) -> None:
        quote = connection.ops.quote_name
        self.alias = alias
        self.table = f"{quote(model._meta.db_table)} AS {alias}"
        self.plain_table = quote(model._meta.db_table)
        self._columns = {f.name: quote(f.column) for f in model._meta.concrete_fields}

    def bare(self, name: str) -> str:
        return str(self._columns[name])

    def __getitem__(self, name: str) -> str:
        return f"{self.alias}.{self._columns[name]}"


def _literal(value: str) -> str:
    if not value.replace("_", "").replace(".", "").isalnum():
        raise ValueError(f"not a plain state: {value!r}")
    return f"'{value}'"


@dataclass(frozen=True)
class Lease:
    """A due delivery leased to a lane (`Outbox.lease`)."""

    delivery_id: UUID
    attempt_count: int
    event_type: str
    event_data: Any  # JSON text, as the database gives it
    due_at: datetime
    created_at: datetime
    event_id: UUID
    event_created_at: datetime
    event_object_id: UUID | None
    event_sequence: int


class Outbox(BuiltOnce):
    def __init__(self, shape: OutboxShape) -> None:
        super().__init__()
        self.shape = shape
        self.model = shape.delivery

    def _connection(self) -> Any:
        return connections[router.db_for_write(self.shape.delivery)]

    def _build(self, connection: Any) -> tuple[Any, ...]:
        shape = self.shape
        d, w, a, e = (
            _Names(shape.delivery, connection, "d"),
            _Names(shape.endpoint, connection, "w"),
            _Names(shape.attempt, connection, "a"),
            _Names(shape.event, connection, "e"),
        )
        mine, earlier, owed = (
            _Names(shape.event, connection, "e1"),
            _Names(shape.event, connection, "e2"),
            _Names(shape.delivery, connection, "d2"),
        )
        pending, open_states = _literal(shape.pending), ", ".join(map(_literal, shape.open_attempts))
        healthy = f"{w['active']} AND {w['last_failure_at']} IS NULL"
        lease = f"""
WITH due AS (
    SELECT {d["id"]}, {d["next_attempt_at"]}, {d["created_at"]}
    FROM {d.table}
    JOIN {w.table} ON {w["id"]} = {d["webhook"]}
    WHERE {d["webhook"]} = %(webhook)s AND {d["status"]} = {pending} AND {d["next_attempt_at"]} <= %(now)s
      AND {d["attempt_count"]} < %(max_attempts)s AND {healthy}
      AND NOT EXISTS (
          SELECT 1 FROM {a.table} WHERE {a["delivery"]} = {d["id"]} AND {a["state"]} IN ({open_states})
      )
      AND NOT EXISTS (
          SELECT 1 FROM {mine.table}
          JOIN {earlier.table}
            ON {earlier["object_id"]} = {mine["object_id"]} AND {earlier["sequence"]} < {mine["sequence"]}
          JOIN {owed.table} ON {owed["event"]} = {earlier["id"]} AND {owed["webhook"]} = {d["webhook"]}
          WHERE {mine["id"]} = {d["event"]} AND {owed["status"]} = {pending}
      )
    ORDER BY {d["next_attempt_at"]}, {d["created_at"]}
    LIMIT %(limit)s
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE {d.table}
SET {d.bare("next_attempt_at")} = %(until)s
FROM due, {e.table}
WHERE {d["id"]} = due.{d.bare("id")} AND {e["id"]} = {d["event"]}
RETURNING {d["id"]}, {d["attempt_count"]}, {e["type"]}, {e["data"]},
          due.{d.bare("next_attempt_at")}, due.{d.bare("created_at")},
          {e["id"]}, {e["created_at"]}, {e["object_id"]}, {e["sequence"]}
"""  # noqa: S608 (names from the models, states plain words)
        # An attempt's row: the columns it is given, its delivery and number from the count,
        # the rest their defaults.
        from_count = {"delivery": f"counted.{d.bare('id')}", "number": "counted.total_attempts"}
        columns, values, defaults = [], [], {}
        for field in shape.attempt._meta.concrete_fields:
            columns.append(a.bare(field.name))
            if field.name in from_count:
                values.append(from_count[field.name])
            else:
                values.append(f"%(attempt_{field.name})s")
                defaults[field.name] = field
        endpoint_columns = ("url", "secret", "previous_secret", "previous_secret_expires_at")
        start = f"""
WITH counted AS (
    UPDATE {d.table}
    SET {d.bare("attempt_count")} = {d["attempt_count"]} + 1, {d.bare("total_attempts")} = {d["total_attempts"]} + 1,
        {d.bare("next_attempt_at")} = %(next_attempt_at)s
    FROM {w.table}
    WHERE {d["id"]} = %(delivery)s AND {d["status"]} = {pending} AND {d["next_attempt_at"]} = %(until)s
      AND {w["id"]} = {d["webhook"]} AND {healthy}
    RETURNING {d["id"]}, {d["total_attempts"]} AS total_attempts, {w["id"]} AS endpoint_id,
              {", ".join(w[name] for name in endpoint_columns)}
), started AS (
    INSERT INTO {a.plain_table} ({", ".join(columns)})
    SELECT {", ".join(values)} FROM counted
)
SELECT total_attempts, endpoint_id, {", ".join(w.bare(name) for name in endpoint_columns)} FROM counted
"""  # noqa: S608 (names from the models, states plain words)
        succeeded = f"""
WITH done AS (
    UPDATE {a.table}
    SET {a.bare("state")} = {_literal(shape.done)}, {a.bare("finished_at")} = %(now)s,
        {a.bare("status_code")} = %(status_code)s, {a.bare("duration_ms")} = %(duration_ms)s,
        {a.bare("error")} = %(error)s, {a.bare("response_excerpt")} = %(excerpt)s
    WHERE {a["id"]} = %(attempt)s
    RETURNING {a["delivery"]} AS delivery_id
), delivered AS (
    UPDATE {d.table}
    SET {d.bare("status")} = {_literal(shape.succeeded)}, {d.bare("delivered_at")} = %(now)s,
        {d.bare("next_attempt_at")} = NULL
    WHERE {d["id"]} IN (SELECT delivery_id FROM done) AND {d["status"]} = {pending}
    RETURNING {d["webhook"]} AS endpoint_id
)
UPDATE {w.table} SET {w.bare("consecutive_failures")} = 0, {w.bare("last_failure_at")} = NULL
WHERE {w["id"]} IN (SELECT endpoint_id FROM delivered)
  AND ({w["consecutive_failures"]} > 0 OR {w["last_failure_at"]} IS NOT NULL)
"""  # noqa: S608 (names from the models, states plain words)
        # Many successes at once (`attempts_succeeded`): the same three steps, the results
        # given as rows of VALUES (`{rows}`: one "(%s, %s, %s, %s, %s)" per attempt), typed
        # by the attempt model's columns.
        typed = ", ".join(
            f"%s::{shape.attempt._meta.get_field(name).db_type(connection)}"
            for name in ("id", "status_code", "duration_ms", "error", "response_excerpt")
        )
        many = f"""
WITH results (attempt_id, status_code, duration_ms, error, excerpt) AS (
    VALUES {{rows}}
), done AS (
    UPDATE {a.table}
    SET {a.bare("state")} = {_literal(shape.done)}, {a.bare("finished_at")} = %s,
        {a.bare("status_code")} = results.status_code, {a.bare("duration_ms")} = results.duration_ms,
        {a.bare("error")} = results.error, {a.bare("response_excerpt")} = results.excerpt
    FROM results
    WHERE {a["id"]} = results.attempt_id
    RETURNING {a["delivery"]} AS delivery_id
), delivered AS (
    UPDATE {d.table}
    SET {d.bare("status")} = {_literal(shape.succeeded)}, {d.bare("delivered_at")} = %s,
        {d.bare("next_attempt_at")} = NULL
    WHERE {d["id"]} IN (SELECT delivery_id FROM done) AND {d["status"]} = {pending}
    RETURNING {d["webhook"]} AS endpoint_id
)
UPDATE {w.table} SET {w.bare("consecutive_failures")} = 0, {w.bare("last_failure_at")} = NULL
WHERE {w["id"]} IN (SELECT DISTINCT endpoint_id FROM delivered)
  AND ({w["consecutive_failures"]} > 0 OR {w["last_failure_at"]} IS NOT NULL)
"""  # noqa: S608 (names from the models, states plain words)
        return lease, start, succeeded, defaults, many, typed

    def lease(self, *, webhook_id: UUID, now: datetime, until: datetime, limit: int, max_attempts: int) -> list[Lease]:
        """Lease up to `limit` of a healthy endpoint's due deliveries (next_attempt_at moves to
        `until`), oldest due first; none for an endpoint failing or disabled. Deliveries with an
        attempt open, with `max_attempts` made, or with an earlier event of the same object
        (a lower sequence) still pending for this endpoint are left alone."""
        connection = self._connection()
        params = {"webhook": webhook_id, "now": now, "until": until, "limit": limit, "max_attempts": max_attempts}
        rows = run(connection, self._built_for(connection)[0], params)
        return sorted((Lease(*row) for row in rows), key=lambda leased: (leased.due_at, leased.created_at))

    def attempt_start(
        self, *, delivery_id: UUID, until: datetime, next_attempt_at: datetime, attempt: dict[str, Any]
    ) -> Sequence[Any] | None:
        """Count the next attempt of a delivery still leased until `until` on a healthy endpoint
        and insert its row (`attempt`: its given fields; the rest take their defaults). The
        attempt's number and the endpoint's id, url, secret, previous_secret and
        previous_secret_expires_at as stored; None when the lease or the endpoint changed."""
        connection = self._connection()
        defaults = self._built_for(connection)[3]
        params: dict[str, Any] = {"delivery": delivery_id, "until": until, "next_attempt_at": next_attempt_at}
        for name, field in defaults.items():
            value = attempt[name] if name in attempt else field.get_default()
            params[f"attempt_{name}"] = field.get_db_prep_save(value, connection)
        rows = run(connection, self._built_for(connection)[1], params)
        return rows[0] if rows else None

    def attempt_succeeded(self, *, attempt_id: UUID, now: datetime, result: dict[str, Any]) -> None:
        """A success in one statement: the attempt recorded (even when another round settled the
        delivery), the delivery Succeeded if still pending, the endpoint's failure streak ended
        (its row touched, and locked, only when there is one). `result`: status_code,
        duration_ms, error, excerpt."""
        connection = self._connection()
        run(connection, self._built_for(connection)[2], {"attempt": attempt_id, "now": now, **result}, fetch=False)

    def attempts_succeeded(self, *, now: datetime, results: Sequence[tuple[UUID, int | None, int, str, str]]) -> None:
        """Many successes in one statement, each as `attempt_succeeded` records one. `results`:
        (attempt id, status_code, duration_ms, error, excerpt) of each."""
        if not results:
            return
        connection = self._connection()
        built = self._built_for(connection)
        many, typed = built[4], built[5]
        sql = many.replace("{rows}", ", ".join([f"({typed})"] * len(results)))
        params: list[Any] = [value for row in results for value in row]
        run(connection, sql, [*params, now, now], fetch=False)

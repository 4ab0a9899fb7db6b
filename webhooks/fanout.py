"""An event's deliveries, written by the statement that records the event.

`DELIVERIES` is the read `webhooks.services.event_record` hands to
`core.sql.rows.insert_then_fetch` after the event's INSERT: one Delivery for every endpoint of
the event's owner in the event's mode (live or test, accounts.modes) that wants its type
(`Webhook.wants`; disabled endpoints too: theirs wait until it is re-enabled), read back as
the endpoints that got one.

On PostgreSQL that is one more data-modifying WITH in the event's own statement
(`INSERT INTO webhooks_delivery ... SELECT ... FROM webhooks_webhook`), so the change, its
event and its deliveries are one statement, all or nothing even outside a transaction.
Elsewhere the endpoints are read and the deliveries bulk-created, in the caller's transaction.
tests/webhooks/test_fanout.py holds both ways to the same rows.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.db import router

from core.sql.rows import BuiltOnce, RowReader
from core.sql.state import table
from webhooks.models import OPT_IN_EVENT_TYPES, Delivery, Event, Webhook

_WEBHOOKS_OF = RowReader(Webhook, by=["user", "livemode"])  # an event goes to endpoints of its mode


# A new delivery is due at once and made with its event: these fields take the event's time.
AT_THE_EVENT = ("next_attempt_at", "created_at")


class _DeliveryFanOut(BuiltOnce):
    model = Webhook

    def _build(self, connection) -> tuple:
        quote = connection.ops.quote_name
        meta = Delivery._meta
        if meta.pk.default is not uuid.uuid4:  # gen_random_uuid() stands for it below
            raise TypeError("Delivery's primary key must default to uuid.uuid4")
        endpoint = table(Webhook, connection)
        columns, selected, given = [], [], []  # given: "event", "at", or a fixed value
        for field in meta.concrete_fields:
            columns.append(quote(field.column))
            if field.primary_key:
                selected.append("gen_random_uuid()")
                continue
            if field.name == "webhook":
                selected.append(f"{endpoint}.{quote(Webhook._meta.pk.column)}")
                continue
            selected.append("%s")
            if field.name == "event":
                given.append("event")
            elif field.name in AT_THE_EVENT:
                given.append("at")
            elif field.has_default() and callable(field.default):  # a value per row: it needs a place here
                raise TypeError(f"Delivery.{field.name}: a computed default the fan-out does not know")
            else:  # the field's default, the same for every delivery
                given.append((field.get_db_prep_save(field.get_default(), connection),))
        events = f"{endpoint}.{quote(Webhook._meta.get_field('events').column)}"
        # Webhook.wants: an empty list means every type but the opt-in ones, else the listed ones.
        wants = (
            f"(CASE WHEN jsonb_typeof({events}) <> 'array' OR {events} = '[]'::jsonb THEN %s"
            f" ELSE {events} @> jsonb_build_array(%s::text) END)"
        )
        owner = f"{endpoint}.{quote(Webhook._meta.get_field('user').column)}"
        mode = f"{endpoint}.{quote(Webhook._meta.get_field('livemode').column)}"
        insert = (
            f"INSERT INTO {table(Delivery, connection)} ({', '.join(columns)}) SELECT {', '.join(selected)}"  # noqa: S608
            f" FROM {endpoint}{{guard}} WHERE {owner} = %s AND {mode} = %s AND {wants} ON CONFLICT DO NOTHING"
            f" RETURNING {quote(meta.get_field('webhook').column)}"
        )
        reader_sql = _WEBHOOKS_OF.statement(connection, [None, None])[0]
        select = (
            f"{reader_sql} AND {endpoint}.{quote(Webhook._meta.pk.column)}"  # noqa: S608 (names from the models)
            f" IN (SELECT {quote(meta.get_field('webhook').column)} FROM deliveries_fanned_out)"
        )
        return insert, given, select

    def within(self, connection, values: Sequence[Any], *, after: str | None = None) -> tuple[list, str, list]:
        (event,) = values
        insert, given, select = self._built_for(connection)
        at = event.created_at
        params = [event.pk if value == "event" else at if value == "at" else value[0] for value in given]
        params += [event.user_id, event.livemode, event.type not in OPT_IN_EVENT_TYPES, event.type]
        params += [event.user_id, event.livemode]
        cte = "deliveries_fanned_out AS ({})".format(insert.replace("{guard}", f", {after}" if after else ""))
        return [cte], select, params

    def fetch(self, event: Event) -> list[Webhook]:
        wanting = [w for w in _WEBHOOKS_OF.fetch(event.user_id, event.livemode) if w.wants(event.type)]
        if wanting:
            at = {name: event.created_at for name in AT_THE_EVENT}
            Delivery.objects.using(router.db_for_write(Delivery)).bulk_create(
                [Delivery(webhook=w, event=event, **at) for w in wanting], ignore_conflicts=True
            )
        return wanting

    def instances(self, rows, connection) -> list[Webhook]:
        return _WEBHOOKS_OF.instances(rows, connection)

    def found_at(self, connection, offset: int) -> int:
        return _WEBHOOKS_OF.found_at(connection, offset)


DELIVERIES = _DeliveryFanOut()

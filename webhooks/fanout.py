"""An event's deliveries, written by the statement that records the event.

`DELIVERIES` is the read `webhooks.services.event_record` hands to
`core.sql.rows.insert_then_fetch` after the event's INSERT: one Delivery for every endpoint of
the event's owner in the event's mode (live or test, accounts.modes) that wants its type
(`Webhook.wants`; disabled endpoints too: theirs wait until it is re-enabled), read back as
the endpoints that got one.

On PostgreSQL that is one more data-modifying WITH in the event's own statement, built by
`core.sql.fanout.FanOut` from the models, so the change, its event and its deliveries are one
statement, all or nothing even outside a transaction. Elsewhere the endpoints are read and the
deliveries bulk-created, in the caller's transaction.
tests/webhooks/test_fanout.py holds both ways to the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import router

from core.sql.fanout import FanOut
from core.sql.rows import RowReader
from webhooks.models import OPT_IN_EVENT_TYPES, Delivery, Event, Webhook

_WEBHOOKS_OF = RowReader(Webhook, by=["user", "livemode"])  # an event goes to endpoints of its mode


# A new delivery is due at once and made with its event: these fields take the event's time.
AT_THE_EVENT = ("next_attempt_at", "created_at")


class _DeliveryFanOut(FanOut[Webhook]):
    def __init__(self) -> None:
        per_call = {"event": "event"} | {name: "at" for name in AT_THE_EVENT}
        super().__init__(Delivery, _WEBHOOKS_OF, link="webhook", listing="events", per_call=per_call)

    def within(
        self, connection: Any, values: Sequence[Any], *, after: str | None = None
    ) -> tuple[list[str], str, list[Any]]:
        (event,) = values
        # Webhook.wants: an empty list means every type but the opt-in ones, else the listed ones.
        return self.fanned_out(
            connection,
            given={"event": event.pk, "at": event.created_at},
            by=[event.user_id, event.livemode],
            listed=event.type,
            when_unlisted=event.type not in OPT_IN_EVENT_TYPES,
            after=after,
        )

    def fetch(self, event: Event) -> list[Webhook]:
        wanting = [w for w in _WEBHOOKS_OF.fetch(event.user_id, event.livemode) if w.wants(event.type)]
        if wanting:
            at = {name: event.created_at for name in AT_THE_EVENT}
            Delivery.objects.using(router.db_for_write(Delivery)).bulk_create(
                [Delivery(webhook=w, event=event, **at) for w in wanting], ignore_conflicts=True
            )
        return wanting


DELIVERIES = _DeliveryFanOut()

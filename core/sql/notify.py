"""Wake-ups from PostgreSQL: a row's change NOTIFYs a channel when its transaction commits, and
one LISTEN connection per process hears it.

Used by the pay page's long poll (paylinks/live.py): triggers on the drafts and payment-request
tables send the payment request's token on `PAY_LIVE_CHANNEL` whenever a row of a pay link
changes, whatever code changed it, in the transaction that changed it (NOTIFY is delivered at
commit, never for a rolled-back change). The trigger text is built from the models' metadata by
the migration that installs it. Elsewhere than PostgreSQL `available()` is False and the long
poll reads on a timer instead.

The listening connection is a session of its own (LISTEN needs one: behind PgBouncer in
transaction mode set LIVE_LISTEN_DATABASE_URL to a direct address of the server).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import psycopg
from django.conf import settings
from django.db import connections
from django.db.models import Model

from core.sql.built import column_field
from core.sql.state import table

PAY_LIVE_CHANNEL = "pay_live"
_FUNCTION = "pay_live_wake"


def available() -> bool:
    """Whether this process can hear NOTIFY: PostgreSQL, reached directly or, behind a pooler in
    transaction mode (which gives no session to LISTEN on), through LIVE_LISTEN_DATABASE_URL."""
    if connections["default"].vendor != "postgresql":
        return False
    return not settings.DATABASE_TRANSACTION_POOLER or bool(settings.LIVE_LISTEN_DATABASE_URL)


def pay_live_triggers(draft: type[Model], payment_request: type[Model]) -> tuple[str, str]:
    """(create, drop) SQL of the triggers that NOTIFY a pay link's token on PAY_LIVE_CHANNEL when
    its payment request or one of its drafts is updated. `draft` and `payment_request` are the
    models (a migration's historical ones): table and column names come from their metadata."""
    connection: Any = connections["default"]
    q = connection.ops.quote_name
    drafts, requests = table(draft, connection), table(payment_request, connection)
    link = q(column_field(draft, "payment_request_id").column)
    pk, token = q(column_field(payment_request, "id").column), q(column_field(payment_request, "token").column)
    create = f"""
CREATE OR REPLACE FUNCTION {_FUNCTION}_draft() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{PAY_LIVE_CHANNEL}', r.{token}) FROM {requests} r WHERE r.{pk} = NEW.{link};
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION {_FUNCTION}_request() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{PAY_LIVE_CHANNEL}', NEW.{token});
    RETURN NULL;
END $$;
CREATE TRIGGER {_FUNCTION} AFTER UPDATE ON {drafts}
    FOR EACH ROW WHEN (NEW.{link} IS NOT NULL) EXECUTE FUNCTION {_FUNCTION}_draft();
CREATE TRIGGER {_FUNCTION} AFTER UPDATE ON {requests}
    FOR EACH ROW EXECUTE FUNCTION {_FUNCTION}_request();
"""
    drop = f"""
DROP TRIGGER IF EXISTS {_FUNCTION} ON {drafts};
DROP TRIGGER IF EXISTS {_FUNCTION} ON {requests};
DROP FUNCTION IF EXISTS {_FUNCTION}_draft();
DROP FUNCTION IF EXISTS {_FUNCTION}_request();
"""
    return create, drop


def _listen_params() -> dict[str, Any]:
    """The connection a listener opens: LIVE_LISTEN_DATABASE_URL if set, else the default database's."""
    if settings.LIVE_LISTEN_DATABASE_URL:
        return {"conninfo": settings.LIVE_LISTEN_DATABASE_URL}
    params = connections["default"].get_connection_params()
    keep = ("dbname", "user", "password", "host", "port", "sslmode", "sslrootcert", "sslcert", "sslkey", "options")
    return {key: value for key, value in params.items() if key in keep and value not in (None, "")}


async def listen(channel: str, heard: Callable[[str], None], ready: asyncio.Event) -> None:
    """LISTEN on `channel` and call `heard(payload)` for each notification, on this event loop;
    `ready` is set once listening. Returns never: raises when the connection is lost (the
    caller reconnects) and closes it when cancelled."""
    params = _listen_params()
    conn = await psycopg.AsyncConnection.connect(autocommit=True, application_name="pay-live-listener", **params)
    try:
        await conn.execute(f"LISTEN {channel}")
        ready.set()
        async for notification in conn.notifies():
            heard(notification.payload)
        raise psycopg.OperationalError("the listening connection ended")
    finally:
        ready.clear()
        await conn.close()

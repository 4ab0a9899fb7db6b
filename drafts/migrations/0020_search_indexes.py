"""The draft list's search (`q`: memo contains, receiver address or payment transaction equal
ignoring case, order id, draft id) read from an index per branch, so PostgreSQL ORs the few
matching rows instead of reading every draft of the account (1.7 s for an account with a million
drafts in the ten-million-draft bench). The memo's "contains" is served by a trigram index
(PostgreSQL's pg_trgm, a trusted extension any database owner may create); where it cannot be
created the migration says so and the search still works, reading the account's drafts as
before. Built CONCURRENTLY on PostgreSQL, as 0018."""

import importlib
import logging

from django.db import DatabaseError, migrations, models
from django.db.models import Q
from django.db.models.functions import Upper

logger = logging.getLogger(__name__)

NEW = [
    models.Index(Upper("receiver_address"), condition=Q(receiver_address__isnull=False), name="draft_search_receiver"),
    models.Index(Upper("paid_tx_id"), condition=Q(paid_tx_id__isnull=False), name="draft_search_paid_tx"),
    models.Index(fields=["order_id"], condition=Q(order_id__isnull=False), name="draft_search_order_id"),
]
MEMO_INDEX = "draft_search_memo_trgm"
_indexes = importlib.import_module("drafts.migrations.0018_account_list_indexes")._indexes


def memo_index_add(schema_editor) -> None:
    """The trigram index on UPPER(memo), which Django's icontains compares with LIKE."""
    try:
        schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except DatabaseError as exc:
        logger.warning("drafts: pg_trgm could not be created (%s); a memo search reads the account's drafts", exc)
        return
    schema_editor.execute(
        f'CREATE INDEX CONCURRENTLY IF NOT EXISTS "{MEMO_INDEX}" ON "drafts_draft" '
        'USING gin (UPPER("memo") gin_trgm_ops) WHERE "memo" IS NOT NULL'
    )


def forwards(apps, schema_editor) -> None:
    _indexes(apps, schema_editor, add=NEW, drop=[])
    if schema_editor.connection.vendor == "postgresql":
        memo_index_add(schema_editor)


def backwards(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{MEMO_INDEX}"')
    _indexes(apps, schema_editor, add=[], drop=NEW)


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY runs outside a transaction

    dependencies = [("drafts", "0019_scale_indexes")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards)],
            state_operations=[migrations.AddIndex(model_name="draft", index=index) for index in NEW],
        ),
    ]

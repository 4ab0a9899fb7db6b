"""An account's lists read from indexes that lead with (user, livemode): the list in its mode
newest first, its count from the index alone, and the same under a status filter. Built
CONCURRENTLY on PostgreSQL (the table may hold millions of rows: docs/production.md, Rolling
migrations), so writes go on meanwhile."""

from django.conf import settings
from django.db import migrations, models

OLD = models.Index(fields=["user", "-created_at"], name="drafts_draf_user_id_5e451f_idx")
NEW = [
    models.Index(fields=["user", "livemode", "-created_at", "-id"], name="draft_account_list"),
    models.Index(fields=["user", "livemode", "status", "-created_at", "-id"], name="draft_account_status"),
]


def _indexes(apps, schema_editor, add: list, drop: list) -> None:
    model = apps.get_model("drafts", "Draft")
    concurrently = schema_editor.connection.vendor == "postgresql"
    for index in add:
        if concurrently:
            schema_editor.execute(index.create_sql(model, schema_editor, concurrently=True))
        else:
            schema_editor.add_index(model, index)
    for index in drop:
        if concurrently:
            schema_editor.execute(index.remove_sql(model, schema_editor, concurrently=True))
        else:
            schema_editor.remove_index(model, index)


def added_concurrently(indexes: list) -> migrations.SeparateDatabaseAndState:
    """The operation of a later migration that only adds `indexes` to the drafts table:
    CONCURRENTLY on PostgreSQL (its migration must be `atomic = False`), as Django adds them
    elsewhere; the model state gains them either way."""

    def forwards(apps, schema_editor) -> None:
        _indexes(apps, schema_editor, add=indexes, drop=[])

    def backwards(apps, schema_editor) -> None:
        _indexes(apps, schema_editor, add=[], drop=indexes)

    return migrations.SeparateDatabaseAndState(
        database_operations=[migrations.RunPython(forwards, backwards)],
        state_operations=[migrations.AddIndex(model_name="draft", index=index) for index in indexes],
    )


def forwards(apps, schema_editor) -> None:
    _indexes(apps, schema_editor, add=NEW, drop=[OLD])


def backwards(apps, schema_editor) -> None:
    _indexes(apps, schema_editor, add=[OLD], drop=NEW)


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("drafts", "0017_finality_and_reversal"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards)],
            state_operations=[
                migrations.RemoveIndex(model_name="draft", name=OLD.name),
                *(migrations.AddIndex(model_name="draft", index=index) for index in NEW),
            ],
        ),
    ]

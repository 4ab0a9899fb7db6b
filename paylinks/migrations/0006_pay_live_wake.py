"""The triggers by which a pay link's change wakes the payers waiting on its page (core/sql/notify.py)."""

from django.db import migrations

from core.sql.notify import pay_live_triggers


def _sql(apps, schema_editor, which: int) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return  # elsewhere the long poll reads on a timer
    sql = pay_live_triggers(apps.get_model("drafts", "Draft"), apps.get_model("paylinks", "PaymentRequest"))[which]
    schema_editor.execute(sql)


def create(apps, schema_editor) -> None:
    _sql(apps, schema_editor, 0)


def drop(apps, schema_editor) -> None:
    _sql(apps, schema_editor, 1)


class Migration(migrations.Migration):
    dependencies = [
        ("paylinks", "0005_payment_request_payer_language"),
        ("drafts", "0017_finality_and_reversal"),
    ]

    operations = [
        migrations.RunPython(create, drop),
    ]

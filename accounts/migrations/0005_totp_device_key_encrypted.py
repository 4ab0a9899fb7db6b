"""Authenticator devices move from django-otp's TOTPDevice (its key in clear) to
accounts.TotpDevice (the key encrypted at rest). The old table, where an earlier version left
one, is emptied: no key stays in clear. Backwards, the devices go back if that table exists."""

import accounts.models
import core.encryption
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


OLD_TABLE = "otp_totp_totpdevice"
COLUMNS = (
    "user_id", "name", "confirmed", "throttling_failure_timestamp", "throttling_failure_count",
    "created_at", "last_used_at", "key", "step", "t0", "digits", "tolerance", "drift", "last_t",
)  # fmt: skip


def devices_move_in(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    TotpDevice = apps.get_model("accounts", "TotpDevice")
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(map(quote, COLUMNS))} FROM {quote(OLD_TABLE)}")  # noqa: S608
        rows = cursor.fetchall()
    # Saved through the model, so the key field encrypts it.
    TotpDevice.objects.bulk_create([TotpDevice(**dict(zip(COLUMNS, row, strict=True))) for row in rows])
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {quote(OLD_TABLE)}")  # noqa: S608


def devices_move_back(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    TotpDevice = apps.get_model("accounts", "TotpDevice")
    quote = connection.ops.quote_name
    marks = ", ".join(["%s"] * len(COLUMNS))
    with connection.cursor() as cursor:
        for device in TotpDevice.objects.all():
            cursor.execute(
                f"INSERT INTO {quote(OLD_TABLE)} ({', '.join(map(quote, COLUMNS))}) VALUES ({marks})",  # noqa: S608
                [getattr(device, column) for column in COLUMNS],
            )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_used_passkey_challenge"),
    ]

    operations = [
        migrations.CreateModel(
            name="TotpDevice",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(help_text="The human-readable name of this device.", max_length=64)),
                ("confirmed", models.BooleanField(default=True, help_text="Is this device ready for use?")),
                (
                    "throttling_failure_timestamp",
                    models.DateTimeField(
                        blank=True,
                        default=None,
                        help_text="A timestamp of the last failed verification attempt. Null if last attempt succeeded.",
                        null=True,
                    ),
                ),
                (
                    "throttling_failure_count",
                    models.PositiveIntegerField(default=0, help_text="Number of successive failed attempts."),
                ),
                (
                    "created_at",
                    models.DateTimeField(
                        auto_now_add=True,
                        help_text="The date and time when this device was initially created in the system.",
                        null=True,
                    ),
                ),
                (
                    "last_used_at",
                    models.DateTimeField(
                        blank=True, help_text="The most recent date and time this device was used.", null=True
                    ),
                ),
                ("key", core.encryption.EncryptedTextField(default=accounts.models.totp_key_new)),
                ("step", models.PositiveSmallIntegerField(default=30)),
                ("t0", models.BigIntegerField(default=0)),
                ("digits", models.PositiveSmallIntegerField(choices=[(6, 6), (8, 8)], default=6)),
                ("tolerance", models.PositiveSmallIntegerField(default=1)),
                ("drift", models.SmallIntegerField(default=0)),
                ("last_t", models.BigIntegerField(default=-1)),
                (
                    "user",
                    models.ForeignKey(
                        help_text="The user that this device belongs to.",
                        on_delete=django.db.models.deletion.CASCADE,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "TOTP device",
                "abstract": False,
            },
        ),
        migrations.RunPython(devices_move_in, devices_move_back),
    ]

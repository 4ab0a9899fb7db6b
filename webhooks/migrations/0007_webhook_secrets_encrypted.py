"""Signing secrets are stored encrypted (core/encryption.py). Values stored before are
encrypted here; values already encrypted are recognised and left alone, so running it again
(or after `rotate_encryption_keys`) changes nothing. Backwards, the values are decrypted."""

from django.db import migrations

import core.encryption

COLUMNS = ("secret", "previous_secret")


def encrypt_secrets(apps, schema_editor):
    table = apps.get_model("webhooks", "Webhook")._meta.db_table
    for column in COLUMNS:
        core.encryption.column_reencrypt(schema_editor.connection, table=table, pk="id", column=column)


def decrypt_secrets(apps, schema_editor):
    table = apps.get_model("webhooks", "Webhook")._meta.db_table
    for column in COLUMNS:
        core.encryption.column_decrypt(schema_editor.connection, table=table, pk="id", column=column)


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0006_webhook_secret_rotation"),
    ]

    operations = [
        migrations.AlterField(
            model_name="webhook",
            name="secret",
            field=core.encryption.EncryptedTextField(),
        ),
        migrations.AlterField(
            model_name="webhook",
            name="previous_secret",
            field=core.encryption.EncryptedTextField(blank=True, default=""),
        ),
        migrations.RunPython(encrypt_secrets, decrypt_secrets),
    ]

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connections, router

from core.encryption import FieldDecryptionError, column_reencrypt, encrypted_columns
from core.sql.state import table_name


class Command(BaseCommand):
    help = (
        "Re-encrypt every encrypted column under the first FIELD_ENCRYPTION_KEY (values stored in "
        "clear are encrypted). Run it after putting a new key first; then the old key can go."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        for model, field in encrypted_columns():
            connection = connections[router.db_for_write(model)]
            table = table_name(model)
            pk, column = model._meta.pk.column, field.column
            assert pk is not None and column is not None  # concrete fields: each has its column
            try:
                changed, seen = column_reencrypt(connection, table=table, pk=pk, column=column)
            except FieldDecryptionError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"{table}.{field.column}: {changed} of {seen} re-encrypted")

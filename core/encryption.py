"""Secrets at rest: columns that hold a secret the service must read back (webhook signing
secrets, authenticator keys) store a Fernet token, never the value.

The keys come from FIELD_ENCRYPTION_KEY, a comma-separated list of strings: the first one
encrypts, every one decrypts (cryptography's MultiFernet). Each string is stretched into a
Fernet key with HKDF-SHA256, so any long random string will do. To rotate, put a new key
first, run `manage.py rotate_encryption_keys` (every stored value is then under the new key),
and only then drop the old one.

A value no key opens raises `FieldDecryptionError` naming the column: a missing or wrong key
never passes as a garbled secret.
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.apps import apps
from django.conf import settings
from django.db import models

from core.sql.columns import column_set, column_values
from core.sql.state import table_name

_HKDF_INFO = b"payment-drafts field encryption v1"
_FERNET_VERSION = 0x80
_FERNET_MIN_BYTES = 1 + 8 + 16 + 16 + 32  # version, time, IV, one AES block, HMAC


class FieldDecryptionError(Exception):
    """A stored value that none of the FIELD_ENCRYPTION_KEY keys opens (or not encrypted at all)."""


def fernet_key(secret: str) -> bytes:
    """The Fernet key a FIELD_ENCRYPTION_KEY entry stands for."""
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(secret.encode())
    return base64.urlsafe_b64encode(derived)


@functools.lru_cache(maxsize=4)
def _fernets_for(keys: tuple[str, ...]) -> tuple[MultiFernet, Fernet]:
    fernets = [Fernet(fernet_key(key)) for key in keys]
    return MultiFernet(fernets), fernets[0]


def _fernet() -> MultiFernet:
    """Every key (the first encrypts); derived once per process and key list."""
    return _fernets_for(tuple(settings.FIELD_ENCRYPTION_KEYS))[0]


def _primary() -> Fernet:
    return _fernets_for(tuple(settings.FIELD_ENCRYPTION_KEYS))[1]


def is_token(value: str) -> bool:
    """Whether a stored value is a Fernet token (and not a value stored before encryption)."""
    try:
        raw = base64.urlsafe_b64decode(value.encode("ascii"))
    except (ValueError, binascii.Error, UnicodeEncodeError):
        return False
    return len(raw) >= _FERNET_MIN_BYTES and raw[0] == _FERNET_VERSION


def encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode("ascii")


def decrypt(token: str, *, where: str = "a value") -> str:
    if not is_token(token):
        raise FieldDecryptionError(
            f"{where} is not encrypted: run `manage.py migrate` (or `manage.py rotate_encryption_keys`)."
        )
    try:
        return _fernet().decrypt(token.encode("ascii")).decode()
    except InvalidToken:
        raise FieldDecryptionError(
            f"{where} was encrypted with a key that is not in FIELD_ENCRYPTION_KEY. Put the key it was "
            "written with back in the list (after the current one) and run `manage.py rotate_encryption_keys`."
        ) from None


if TYPE_CHECKING:  # generic in django-stubs only (subscripting it fails at run time)
    _TextField = models.TextField[str, str]
else:
    _TextField = models.TextField


class EncryptedTextField(_TextField):
    """A text column stored as a Fernet token and read back as the plain value. The empty
    string stays empty (an unset secret). Lookups by value cannot match: each encryption of
    the same value differs."""

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:  # the column's text, or None
        if not value:
            return value
        return decrypt(value, where=f"{table_name(self.model)}.{self.column}")

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if not value:
            return value
        return encrypt(value)


def encrypted_columns() -> Iterator[tuple[type[models.Model], EncryptedTextField]]:
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if isinstance(field, EncryptedTextField):
                yield model, field


def column_reencrypt(connection: Any, *, table: str, pk: str, column: str, batch: int = 500) -> tuple[int, int]:
    """Bring every value of one column under the first key: a plain value (stored before
    encryption) is encrypted, a token under another key is re-encrypted, one already under
    the first key is left alone. Safe to run again. Returns (rows changed, rows seen).

    Each row is written only if it still holds what was read, so a value changed meanwhile
    (a secret rotated by its owner) is never overwritten; it is under the first key anyway.
    Raises FieldDecryptionError for a token no key opens, before anything of that row is written."""
    fernet, first = _fernet(), _primary()
    shown = f"{connection.ops.quote_name(table)}.{connection.ops.quote_name(column)}"
    changed = seen = 0
    last = None
    while True:
        rows = column_values(connection, table=table, pk=pk, column=column, after=last, limit=batch)
        if not rows:
            return changed, seen
        for key, value in rows:
            seen += 1
            if is_token(value):
                try:
                    first.decrypt(value.encode("ascii"))
                    continue
                except InvalidToken:
                    pass
                try:
                    new = fernet.rotate(value.encode("ascii")).decode("ascii")
                except InvalidToken:
                    raise FieldDecryptionError(
                        f"{shown} of row {key} was encrypted with a key that is not in FIELD_ENCRYPTION_KEY."
                    ) from None
            else:
                new = encrypt(value)
            changed += column_set(connection, table=table, pk=pk, column=column, key=key, value=new, was=value)
        last = rows[-1][0]


def column_decrypt(connection: Any, *, table: str, pk: str, column: str) -> int:
    """Undo encryption of one column (a migration going backwards). Plain values are left."""
    shown = f"{connection.ops.quote_name(table)}.{connection.ops.quote_name(column)}"
    rows = column_values(connection, table=table, pk=pk, column=column)
    for key, value in rows:
        if is_token(value):
            column_set(connection, table=table, pk=pk, column=column, key=key, value=decrypt(value, where=shown))
    return len(rows)

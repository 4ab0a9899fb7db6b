"""FIELD_ENCRYPTION_KEY rotation: a new key put first, `rotate_encryption_keys`, then the old
key dropped, and every secret still reads (and signs, and verifies). A value no key opens is
a clear error naming the column and the setting, never a garbled secret."""

from __future__ import annotations

import io
import time
from base64 import b32encode

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.core.management import CommandError, call_command
from django.db import connection

from accounts.models import TotpDevice
from accounts.totp import totp_verify
from core.encryption import FieldDecryptionError, fernet_key
from tests.accounts.test_totp import code_at
from webhooks import signing
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db

OLD = "old-field-encryption-key-" + "o" * 20
NEW = "new-field-encryption-key-" + "n" * 20


def stored(table: str, column: str, row_id) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE id = %s", [row_id])  # noqa: S608
        return cursor.fetchone()[0]


def rotate() -> str:
    out = io.StringIO()
    call_command("rotate_encryption_keys", stdout=out)
    return out.getvalue()


@pytest.fixture
def secrets_under_old_key(settings, owner):
    settings.FIELD_ENCRYPTION_KEYS = [OLD]
    webhook = Webhook.objects.create(user=owner, url="https://hooks.example.com/a", secret=signing.secret_generate())
    device = TotpDevice.objects.create(user=owner, name="Authenticator app", confirmed=True)
    return webhook, device


def test_a_new_key_first_then_rotation_then_the_old_key_dropped_keeps_every_secret(
    settings, owner, secrets_under_old_key
):
    webhook, device = secrets_under_old_key
    settings.FIELD_ENCRYPTION_KEYS = [NEW, OLD]

    report = rotate()

    assert "webhooks_webhook.secret: 1 of 1 re-encrypted" in report
    assert "accounts_totpdevice.key: 1 of 1 re-encrypted" in report
    new = Fernet(fernet_key(NEW))
    assert new.decrypt(stored("webhooks_webhook", "secret", webhook.id).encode()).decode() == webhook.secret
    with pytest.raises(InvalidToken):
        Fernet(fernet_key(OLD)).decrypt(stored("accounts_totpdevice", "key", device.id).encode())
    assert "webhooks_webhook.secret: 0 of 1 re-encrypted" in rotate()  # nothing left to do

    settings.FIELD_ENCRYPTION_KEYS = [NEW]
    assert Webhook.objects.get(pk=webhook.id).secret == webhook.secret
    secret = b32encode(bytes.fromhex(device.key)).decode()
    assert totp_verify(user=owner, code=code_at(secret, time.time()))


def test_dropping_the_old_key_before_rotating_is_a_clear_error_not_a_wrong_secret(settings, secrets_under_old_key):
    webhook, _ = secrets_under_old_key
    settings.FIELD_ENCRYPTION_KEYS = [NEW]

    with pytest.raises(FieldDecryptionError, match="webhooks_webhook.secret .*not in FIELD_ENCRYPTION_KEY"):
        Webhook.objects.get(pk=webhook.id)
    with pytest.raises(CommandError, match="not in FIELD_ENCRYPTION_KEY"):
        rotate()

    settings.FIELD_ENCRYPTION_KEYS = [NEW, OLD]  # put back, it reads again
    assert Webhook.objects.get(pk=webhook.id).secret == webhook.secret

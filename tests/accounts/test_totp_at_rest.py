"""The authenticator app's key is stored encrypted (accounts.TotpDevice, FIELD_ENCRYPTION_KEY):
the column holds a Fernet token, codes from the app still verify, and devices left in
django-otp's own table (where the key was in clear) are moved over and encrypted."""

from __future__ import annotations

import base64
import importlib
import time
from types import SimpleNamespace

import pytest
from cryptography.fernet import Fernet
from django.apps import apps
from django.conf import settings
from django.db import connection

from accounts.models import TotpDevice
from accounts.totp import totp_verify
from core.encryption import fernet_key
from tests.accounts.conftest import csrf_post
from tests.accounts.test_totp import code_at, setup

pytestmark = pytest.mark.django_db

migration = importlib.import_module("accounts.migrations.0005_totp_device_key_encrypted")


def stored_key(device_id: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT key FROM accounts_totpdevice WHERE id = %s", [device_id])
        return cursor.fetchone()[0]


def opened(token: str) -> str:
    return Fernet(fernet_key(settings.FIELD_ENCRYPTION_KEYS[0])).decrypt(token.encode()).decode()


def test_the_key_is_stored_encrypted_and_codes_from_the_app_verify(registered):
    secret = setup(registered)
    device = TotpDevice.objects.get()
    key_hex = base64.b32decode(secret + "=" * (-len(secret) % 8)).hex()

    column = stored_key(device.id)
    assert key_hex not in column and secret not in column
    assert opened(column) == key_hex
    enabled = csrf_post(registered, "/api/v1/auth/totp/enable", {"code": code_at(secret, time.time())})
    assert enabled.status_code == 200, enabled.content


def test_devices_in_django_otps_table_move_over_encrypted(owner):
    key_hex = "3132333435363738393031323334353637383930"
    with connection.cursor() as cursor:  # the table django-otp's TOTP plugin created, with one device
        cursor.execute(
            "CREATE TABLE otp_totp_totpdevice (id serial PRIMARY KEY, user_id bigint, name varchar(64), "
            "confirmed boolean, throttling_failure_timestamp timestamptz NULL, throttling_failure_count integer, "
            "created_at timestamptz NULL, last_used_at timestamptz NULL, key varchar(80), step smallint, "
            "t0 bigint, digits smallint, tolerance smallint, drift smallint, last_t bigint)"
        )
        cursor.execute(
            "INSERT INTO otp_totp_totpdevice (user_id, name, confirmed, throttling_failure_count, key, step, t0, "
            "digits, tolerance, drift, last_t) VALUES (%s, 'Authenticator app', true, 0, %s, 30, 0, 6, 1, 0, -1)",
            [owner.id, key_hex],
        )

    migration.devices_move_in(apps, SimpleNamespace(connection=connection))

    device = TotpDevice.objects.get(user=owner)
    assert device.confirmed and device.key == key_hex
    assert key_hex not in stored_key(device.id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM otp_totp_totpdevice")
        assert cursor.fetchone()[0] == 0
    secret = base64.b32encode(bytes.fromhex(key_hex)).decode()
    assert totp_verify(user=owner, code=code_at(secret, time.time()))

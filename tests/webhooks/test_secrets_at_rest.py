"""Webhook signing secrets are stored encrypted (core/encryption.py): the columns hold Fernet
tokens under FIELD_ENCRYPTION_KEY, reads and signatures use the secret itself, and the
migration encrypts secrets stored in clear while leaving encrypted ones alone."""

from __future__ import annotations

import hashlib
import hmac
import importlib
from types import SimpleNamespace

import pytest
from cryptography.fernet import Fernet
from django.apps import apps
from django.conf import settings
from django.db import connection

from core.encryption import fernet_key
from tests.webhooks.conftest import deliver_due, record
from webhooks.models import EventType, Webhook

pytestmark = pytest.mark.django_db

migration = importlib.import_module("webhooks.migrations.0007_webhook_secrets_encrypted")


def stored(webhook_id, column: str) -> str:
    """The column as the database holds it, past the ORM."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM webhooks_webhook WHERE id = %s", [webhook_id])  # noqa: S608
        return cursor.fetchone()[0]


def opened(token: str) -> str:
    return Fernet(fernet_key(settings.FIELD_ENCRYPTION_KEYS[0])).decrypt(token.encode()).decode()


def test_the_database_holds_the_secrets_encrypted_and_deliveries_are_signed_with_the_secret(
    api_client, loopback, receiver, owner
):
    created = api_client.post("/api/v1/webhooks", {"url": receiver.url}, format="json").json()
    first = created["secret"]
    rotated = api_client.post(f"/api/v1/webhooks/{created['id']}/rotate-secret", {}, format="json").json()["secret"]

    secret, previous = stored(created["id"], "secret"), stored(created["id"], "previous_secret")
    assert first.removeprefix("whsec_") not in previous and rotated.removeprefix("whsec_") not in secret
    assert opened(secret) == rotated and opened(previous) == first
    assert Webhook.objects.get(pk=created["id"]).secret == rotated

    record(owner, EventType.DRAFT_SEEN, {"draftId": "d-1"})
    deliver_due()
    request = receiver.requests[0]
    assert (
        request.headers["X-Service-Signature"]
        == "sha256=" + hmac.new(rotated.encode(), request.body, hashlib.sha256).hexdigest()
    )
    assert (
        request.headers["X-Service-Signature-Previous"]
        == "sha256=" + hmac.new(first.encode(), request.body, hashlib.sha256).hexdigest()
    )


def test_the_migration_encrypts_secrets_stored_in_clear_and_can_run_again(make_webhook, receiver):
    encrypted = make_webhook(receiver.url)
    old = make_webhook(receiver.url)
    with connection.cursor() as cursor:  # as a version before encryption left it
        cursor.execute(
            "UPDATE webhooks_webhook SET secret = %s, previous_secret = %s WHERE id = %s",
            ["whsec_b2xkLXNlY3JldA==", "whsec_b2xkZXItc2VjcmV0", old.id],
        )
    untouched = stored(encrypted.id, "secret")
    editor = SimpleNamespace(connection=connection)

    migration.encrypt_secrets(apps, editor)

    assert "b2xk" not in stored(old.id, "secret") and opened(stored(old.id, "secret")) == "whsec_b2xkLXNlY3JldA=="
    assert opened(stored(old.id, "previous_secret")) == "whsec_b2xkZXItc2VjcmV0"
    assert Webhook.objects.get(pk=old.id).secret == "whsec_b2xkLXNlY3JldA=="
    assert stored(encrypted.id, "secret") == untouched
    once = stored(old.id, "secret")
    migration.encrypt_secrets(apps, editor)
    assert stored(old.id, "secret") == once

    migration.decrypt_secrets(apps, editor)  # backwards: the secrets in clear again
    assert stored(old.id, "secret") == "whsec_b2xkLXNlY3JldA==" and stored(encrypted.id, "secret") == encrypted.secret

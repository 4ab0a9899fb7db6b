"""Accounts are known to the API by a UUID; no sequential integer id leaves the database."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db


def test_me_shows_the_account_uuid_not_the_row_number(session_client, owner):
    body = session_client.get("/api/v1/auth/me").json()

    assert body["id"] == str(owner.public_id)
    assert uuid.UUID(body["id"]).version == 4
    assert body["id"] != str(owner.pk)


def test_every_id_in_the_openapi_document_is_a_string(anon_client):
    document = anon_client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()
    integer_ids = []

    def walk(node, path):
        if isinstance(node, dict):
            for name, schema in (node.get("properties") or {}).items():
                if (name == "id" or name.endswith("Id")) and isinstance(schema, dict):
                    if schema.get("type") == "integer":
                        integer_ids.append(f"{path}.{name}")
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for n, value in enumerate(node):
                walk(value, f"{path}[{n}]")

    walk(document, "$")
    assert document["components"]["schemas"]["Me"]["properties"]["id"]["format"] == "uuid"
    assert integer_ids == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_existing_accounts_get_a_uuid_each_when_the_column_arrives():
    before, after = [("accounts", "0001_initial")], [("accounts", "0002_user_public_id")]
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    old_user = old.get_model("accounts", "User")
    pks = [old_user.objects.create(email=f"u{n}@example.com", password="!").pk for n in range(3)]

    executor = MigrationExecutor(connection)
    executor.migrate(after)
    new = executor.loader.project_state(after).apps
    public_ids = list(new.get_model("accounts", "User").objects.filter(pk__in=pks).values_list("public_id", flat=True))
    executor = MigrationExecutor(connection)
    executor.migrate(leaves)

    assert len(set(public_ids)) == 3 and None not in public_ids

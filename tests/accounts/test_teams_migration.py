"""Existing accounts become organizations of one (accounts/migrations/0009_teams_memberships.py):
rows written before the change (an account, its API key, a draft, a webhook endpoint, a pay link)
answer the same afterwards, the account's person is its owner and its keys were made by that
person."""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiKey, Membership, Role, User
from drafts.models import Draft
from paylinks.models import PaymentRequest
from payments.enums import Currency, Method, Network
from tests.factories import make_draft
from webhooks.models import Webhook

BEFORE = [("accounts", "0008_account_lock_and_receiver_lock")]
KEY = "pdk_live_" + "m" * 40


def _before_teams() -> list[tuple[str, str]]:
    """Accounts just before the teams migration, every other app at its newest migration that
    does not need it (so drafts, webhooks and pay links have their current tables)."""
    graph = MigrationExecutor(connection).loader.graph
    teams = ("accounts", "0009_teams_memberships")
    others = [leaf for leaf in graph.leaf_nodes() if leaf[0] != "accounts" and teams not in graph.forwards_plan(leaf)]
    return BEFORE + others


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_accounts_made_before_teams_are_organizations_of_one_and_answer_the_same():
    old = _migrate(BEFORE)
    OldUser, OldKey = old.get_model("accounts", "User"), old.get_model("accounts", "ApiKey")
    account = OldUser.objects.create(email="before@example.com", password="!")
    OldKey.objects.create(
        user=account,
        name="old",
        prefix=KEY[:12],
        key_hash=hashlib.sha256(KEY.encode()).hexdigest(),
        scopes=["drafts:read", "drafts:write"],
    )
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())  # every app back to its latest (audit too)

    user = User.objects.get(pk=account.pk)
    membership = Membership.objects.get(organization=user)
    assert (membership.person_id, membership.role) == (user.pk, Role.OWNER)
    key = ApiKey.objects.get(user=user)
    assert key.created_by_id == user.pk
    draft = make_draft(user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {KEY}")
    me = client.get("/api/v1/auth/me")
    assert me.status_code == 200 and me.json()["id"] == str(user.public_id) and me.json()["email"] == user.email
    listed = client.get("/api/v1/drafts").json()
    assert [item["id"] for item in listed["items"]] == [str(draft.id)]
    signed_in = APIClient()
    signed_in.force_login(user)
    assert signed_in.get(f"/api/v1/drafts/{draft.id}").json() == client.get(f"/api/v1/drafts/{draft.id}").json()


ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"
TWIN_ADDRESS = "0x8617E340B3D01FA5F11F306F4090FD50E238070D"  # an open draft's address is its own


def _draft_fields(now, address: str = ADDRESS) -> dict[str, Any]:
    return {
        "network": Network.ETHEREUM.value,
        "currency": Currency.USDC.value,
        "method": Method.SINGLE_OUTPUT.value,
        "receiver_address": address,
        "amount_base_units": 25_000_000,
        "fee_placement": "accrued",
        "platform_fee": {"accrued": True, "waived": False, "percent": 0.39, "feeUsd": 0.1, "feeAmount": "0.1"},
        "fee_base_units": 100_000,
        "required_confirmations": 12,
        "expires_at": now + timedelta(hours=24),
        "created_at": now,
    }


def _webhook_fields(now) -> dict[str, Any]:
    return {
        "url": "https://hooks.example.com/before",
        "events": ["draft.confirmed"],
        "secret": "whsec_" + "s" * 32,
        "created_at": now,
    }


def _pay_link_fields(now) -> dict[str, Any]:
    return {
        "token": secrets.token_urlsafe(32),
        "fiat_currency": "EUR",
        "fiat_amount": Decimal("19.99"),
        "options": [{"currency": "USDC", "network": "ethereum", "receiverAddress": ADDRESS, "method": "single_output"}],
        "memo": "before teams",
        "expires_at": now + timedelta(days=3),
        "created_at": now,
    }


def _same(answer: dict, *, ids: list[str]) -> dict:
    """An answer with the object's own ids and the times of writing taken out."""
    text = json.dumps(answer, sort_keys=True)
    for i, value in enumerate(ids):
        text = text.replace(value, f"<id{i}>")
    return {key: value for key, value in json.loads(text).items() if key not in ("updatedAt",)}


@pytest.mark.django_db(transaction=True)
def test_a_draft_webhook_and_pay_link_written_before_teams_answer_the_same_json_after():
    """Written with the historical models before the migration; read through the API after it,
    each answers as the same object written after the migration does (but for its ids)."""
    now = timezone.now().replace(microsecond=0)
    old = _migrate(_before_teams())
    account = old.get_model("accounts", "User").objects.create(email="before2@example.com", password="!")
    old.get_model("accounts", "ApiKey").objects.create(
        user=account,
        name="old",
        prefix=KEY[:12],
        key_hash=hashlib.sha256(KEY.encode()).hexdigest(),
        scopes=["drafts:read", "paylinks:read", "webhooks:manage"],
    )
    draft = old.get_model("drafts", "Draft").objects.create(user=account, **_draft_fields(now))
    webhook = old.get_model("webhooks", "Webhook").objects.create(user=account, **_webhook_fields(now))
    pay_link = old.get_model("paylinks", "PaymentRequest").objects.create(user=account, **_pay_link_fields(now))
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    user = User.objects.get(pk=account.pk)
    assert Membership.objects.get(organization=user).person_id == user.pk
    twin_draft = Draft.objects.create(user=user, **_draft_fields(now, TWIN_ADDRESS))
    twin_webhook = Webhook.objects.create(user=user, **_webhook_fields(now))
    twin_fields = _pay_link_fields(now)
    twin_pay_link = PaymentRequest.objects.create(user=user, **twin_fields)
    keyed = APIClient()
    keyed.credentials(HTTP_AUTHORIZATION=f"Bearer {KEY}")
    signed_in = APIClient()
    signed_in.force_login(user)
    for path, before, after in (
        ("/api/v1/drafts/{}", draft.id, twin_draft.id),
        ("/api/v1/webhooks/{}", webhook.id, twin_webhook.id),
        ("/api/v1/payment-requests/{}", pay_link.id, twin_pay_link.id),
    ):
        answer = keyed.get(path.format(before))
        assert answer.status_code == 200, (path, answer.content)
        assert answer.json()["id"] == str(before)
        assert signed_in.get(path.format(before)).json() == answer.json()
        ids = [str(before), pay_link.token if before == pay_link.id else ADDRESS]
        twin_ids = [str(after), twin_fields["token"] if after == twin_pay_link.id else TWIN_ADDRESS]
        assert _same(answer.json(), ids=ids) == _same(keyed.get(path.format(after)).json(), ids=twin_ids), path
    listed = keyed.get("/api/v1/drafts").json()
    assert {item["id"] for item in listed["items"]} == {str(draft.id), str(twin_draft.id)}

"""What the operator sees: cursors in the admin, and /healthz naming a watcher that stopped."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from chainwatch.models import Cursor
from tests.conftest import operator_sign_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator_client(client):
    operator_sign_in(client, User.objects.create_superuser("operator@example.com", "operator passphrase"))
    return client


@pytest.fixture
def ethereum_configured(settings):
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": "http://127.0.0.1:1"}}
    settings.CHAINWATCH_STALE_AFTER_SECONDS = 600


def test_the_admin_lists_each_watchers_cursor_head_lag_and_last_error(operator_client):
    Cursor.objects.create(
        network="Ethereum", family="evm", backend="web3-jsonrpc", height=100, head=130, last_error="ChainError: boom"
    )
    page = operator_client.get(reverse("admin:chainwatch_cursor_changelist")).content.decode()
    assert "Ethereum" in page and "130" in page and "ChainError: boom" in page
    assert ">30<" in page  # lag


def test_healthz_fails_naming_an_enabled_configured_watcher_whose_cursor_is_stale(anon_client, ethereum_configured):
    Cursor.objects.create(
        network="Ethereum", family="evm", height=1, last_advanced_at=timezone.now() - timedelta(hours=1)
    )
    response = anon_client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["failed"] == ["watchers"]
    assert response.json()["checks"]["watchers"] == "stale: Ethereum-evm"


def test_healthz_is_ok_when_the_watcher_advanced_recently(anon_client, ethereum_configured):
    Cursor.objects.create(network="Ethereum", family="evm", height=1, last_advanced_at=timezone.now())
    response = anon_client.get("/healthz")
    assert response.status_code == 200 and response.json()["checks"]["watchers"] == "ok"


def test_healthz_ignores_a_stale_cursor_of_a_network_that_is_not_configured(anon_client, ethereum_configured):
    Cursor.objects.create(network="Base", family="evm", height=1, last_advanced_at=timezone.now() - timedelta(days=2))
    Cursor.objects.create(network="Ethereum", family="evm", height=1, last_advanced_at=timezone.now())
    assert anon_client.get("/healthz").status_code == 200


def test_healthz_ignores_a_stale_cursor_of_a_disabled_network(anon_client, ethereum_configured, settings):
    settings.ENABLED_NETWORKS = ["Mainnet"]
    settings.CHAINWATCH_LIGHTNING_ENABLED = False
    Cursor.objects.create(
        network="Ethereum", family="evm", height=1, last_advanced_at=timezone.now() - timedelta(days=2)
    )
    response = anon_client.get("/healthz")
    assert response.status_code == 200 and "watchers" not in response.json()["checks"]


def test_beat_schedules_a_named_watcher_entry_per_enabled_network(settings):
    from config import settings as project_settings

    names = set(project_settings.CELERY_BEAT_SCHEDULE)
    assert {"chainwatch-ethereum-evm", "chainwatch-base-evm", "chainwatch-solana-solana"} <= names
    assert {"chainwatch-mainnet-bitcoin", "chainwatch-mainnet-lightning"} <= names
    entry = project_settings.CELERY_BEAT_SCHEDULE["chainwatch-ethereum-evm"]
    assert entry["task"] == "chainwatch.run" and entry["args"] == ("Ethereum", "evm")

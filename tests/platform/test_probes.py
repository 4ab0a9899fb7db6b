"""/livez, /readyz and the detail of /healthz: each part turns red within a minute of its fault."""

import time
from datetime import timedelta

import pytest
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

import about.views
from chainwatch.models import Cursor
from config.celery import heartbeat
from core.heartbeats import BEAT, WORKER, heartbeat_age, heartbeat_note
from notifications.models import EmailNotification
from webhooks.endpoints import webhook_create, webhook_send_test

pytestmark = pytest.mark.django_db


def healthz(client) -> tuple[int, dict]:
    response = client.get("/healthz")
    return response.status_code, response.json()


def test_livez_answers_without_asking_any_dependency(anon_client, django_assert_num_queries, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # a broker that is down does not matter here
    with django_assert_num_queries(0):
        response = anon_client.get("/livez")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_is_ok_when_everything_answers_and_every_migration_is_applied(anon_client):
    response = anon_client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"] == {"database": "ok", "cache": "ok", "broker": "ok", "migrations": "ok"}


def test_readyz_is_503_while_a_migration_is_not_applied(anon_client, monkeypatch):
    monkeypatch.setattr(about.views, "_migrated", False)
    # As a new release's migration not yet run (the test's transaction puts the record back).
    MigrationRecorder.Migration.objects.filter(app="webhooks").order_by("-name").first().delete()
    response = anon_client.get("/readyz")
    assert response.status_code == 503 and response["Retry-After"]
    assert response.json()["failed"] == ["migrations"] and response.json()["checks"]["migrations"] == "pending"


def test_readyz_is_503_naming_the_broker_when_it_is_down(anon_client, settings):
    settings.CELERY_BROKER_URL, settings.HEALTHZ_BROKER_TIMEOUT_SECONDS = "redis://127.0.0.1:1/0", 1
    response = anon_client.get("/readyz")
    assert response.status_code == 503 and response.json()["failed"] == ["broker"]


def test_beat_sending_the_heartbeat_notes_its_tick_and_the_worker_running_it_notes_its_own(settings):
    from config.celery import app

    assert heartbeat_age(BEAT) is None and heartbeat_age(WORKER) is None
    heartbeat.apply_async()  # as beat sends it: noted in the sending process
    app.control.purge()
    assert heartbeat_age(BEAT) < 5 and heartbeat_age(WORKER) is None
    heartbeat()  # as a worker runs it
    assert heartbeat_age(WORKER) < 5


@pytest.mark.parametrize("part", [BEAT, WORKER])
def test_healthz_turns_red_when_the_beat_or_worker_heartbeat_is_older_than_its_setting(anon_client, settings, part):
    settings.HEALTHZ_BEAT_STALE_SECONDS = settings.HEALTHZ_WORKER_STALE_SECONDS = 45
    heartbeat_note(BEAT)
    heartbeat_note(WORKER)
    status, body = healthz(anon_client)
    assert status == 200 and body["checks"][BEAT] == body["checks"][WORKER] == "ok"
    assert body["detail"][part]["lastAgeSeconds"] < 5

    heartbeat_note(part, at=time.time() - 50)
    status, body = healthz(anon_client)
    assert status == 503 and body["failed"] == [part]
    assert body["checks"][part].startswith("stale: ") and body["detail"][part]["lastAgeSeconds"] >= 50


def test_healthz_shows_each_watchers_lag_and_turns_red_a_minute_after_its_last_good_pass(anon_client, settings):
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": "http://127.0.0.1:1"}}
    now = timezone.now()
    Cursor.objects.create(network="Ethereum", family="evm", height=100, head=112, last_advanced_at=now)
    status, body = healthz(anon_client)
    assert status == 200
    watcher = body["detail"]["watchers"]["Ethereum-evm"]
    assert (watcher["height"], watcher["head"], watcher["lag"], watcher["failing"]) == (100, 112, 12, False)

    # The node died: every pass since fails.
    Cursor.objects.filter(network="Ethereum").update(last_advanced_at=now - timedelta(seconds=61), last_error_at=now)
    status, body = healthz(anon_client)
    assert status == 503 and body["failed"] == ["watchers"]
    assert body["detail"]["watchers"]["Ethereum-evm"]["failing"] is True
    assert body["detail"]["watchers"]["Ethereum-evm"]["lastPassAgeSeconds"] >= 61


def test_healthz_shows_the_webhook_backlog_and_turns_red_when_a_due_delivery_waits_too_long(
    anon_client, owner, settings
):
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    webhook = webhook_create(user=owner, url="http://127.0.0.1:9/hook", events=None)
    webhook_send_test(webhook=webhook, now=timezone.now() - timedelta(seconds=20))
    status, body = healthz(anon_client)
    assert status == 200 and body["detail"]["webhooks"]["backlog"] == 1
    assert 20 <= body["detail"]["webhooks"]["oldestDueAgeSeconds"] < 30

    webhook_send_test(webhook=webhook, now=timezone.now() - timedelta(seconds=61))
    status, body = healthz(anon_client)
    assert status == 503 and body["failed"] == ["webhooks"]
    assert body["detail"]["webhooks"]["backlog"] == 2 and body["detail"]["webhooks"]["oldestDueAgeSeconds"] >= 61


def test_healthz_shows_the_email_backlog_and_turns_red_when_a_due_email_waits_too_long(anon_client):
    EmailNotification.objects.create(to="a@example.com", kind="test", next_attempt_at=timezone.now())
    status, body = healthz(anon_client)
    assert status == 200 and body["detail"]["emails"]["backlog"] == 1

    EmailNotification.objects.create(
        to="b@example.com", kind="test", next_attempt_at=timezone.now() - timedelta(seconds=61)
    )
    status, body = healthz(anon_client)
    assert status == 503 and body["failed"] == ["emails"]
    assert body["detail"]["emails"] == {"backlog": 2, "oldestDueAgeSeconds": pytest.approx(61, abs=5)}

"""The database, the cache or the broker down: the real server answers 503 problem+json with
Retry-After (never 500), and answers normally again once the dependency is back."""

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.ownservers import OwnPostgres, OwnRedis, free_port, stop_group, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

SETUP = """
import django; django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from accounts.models import User
from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create
user = User.objects.create_user("outage@example.com", "a long enough passphrase")
print(api_key_create(user=user, name="outage", scopes=list(ALL_SCOPES)).key)
"""
DRAFT = {
    "network": "Base",
    "currency": "USDC",
    "receiverAddress": "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "amountSats": 5_000_000,
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    database, cache, broker = OwnPostgres(), OwnRedis(), OwnRedis()
    env = dict(os.environ) | {
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "ENV_FILE": "",
        "DATABASE_URL": database.url,
        "CACHE_URL": cache.url(0),
        "CELERY_BROKER_URL": broker.url(0),
        "HEALTHZ_BROKER_TIMEOUT_SECONDS": "1",
    }
    server = None
    try:
        key = subprocess.run(
            [sys.executable, "-c", SETUP], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        port = free_port()
        log = tmp_path_factory.mktemp("outage") / "gunicorn.log"
        server = subprocess.Popen(
            [
                str(ROOT / ".venv/bin/gunicorn"),
                "config.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "1",
                "--timeout",
                "60",
            ],  # fmt: skip
            cwd=ROOT,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_for_port(port, process=server)
        yield {"base": f"http://127.0.0.1:{port}", "key": key, "db": database, "cache": cache, "broker": broker}
    finally:
        if server is not None:
            stop_group(server)
        database.remove()
        cache.stop()
        broker.stop()


def call(stack, method: str, path: str, body: dict | None = None) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        stack["base"] + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {stack['key']}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read() or b"{}")


def page(stack, path: str) -> tuple[int, dict]:
    """A browser's GET with a session cookie (the session is looked up in the database)."""
    request = urllib.request.Request(stack["base"] + path, headers={"Cookie": "sessionid=" + "s" * 32})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


def probes(stack) -> tuple[int, int, list, list]:
    """/livez status, /readyz status, and what /readyz and /healthz name as failed."""
    live = call(stack, "GET", "/livez")
    ready = call(stack, "GET", "/readyz")
    health = call(stack, "GET", "/healthz")
    assert health[0] == (200 if not health[2]["failed"] else 503), health
    return live[0], ready[0], ready[2]["failed"], health[2]["failed"]


def assert_unavailable(answer: tuple[int, dict, dict], code: str) -> None:
    status, headers, body = answer
    assert status == 503, answer
    assert headers["Content-Type"] == "application/problem+json"
    assert int(headers["Retry-After"]) >= 1
    assert body["code"] == code and body["status"] == 503


def test_the_database_down_is_503_and_the_next_request_after_it_returns_succeeds(stack):
    assert call(stack, "GET", "/api/v1/drafts")[0] == 200
    stack["db"].stop()
    try:
        assert_unavailable(call(stack, "GET", "/api/v1/drafts"), "database_unavailable")
        assert_unavailable(call(stack, "POST", "/api/v1/drafts", DRAFT), "database_unavailable")
        assert probes(stack) == (200, 503, ["database"], ["database"])
        status, headers = page(stack, "/dashboard/")  # a page, its session read in a middleware
        assert status == 503 and int(headers["Retry-After"]) >= 1
    finally:
        stack["db"].start()
    assert call(stack, "GET", "/api/v1/drafts")[0] == 200
    assert call(stack, "POST", "/api/v1/drafts", DRAFT)[0] == 201


def test_the_cache_down_refuses_nothing_and_keeps_the_instance_ready(stack):
    assert call(stack, "POST", "/api/v1/drafts", DRAFT | {"amountSats": 5_000_002})[0] == 201
    stack["cache"].stop()
    try:
        status, _, body = call(stack, "POST", "/api/v1/drafts", DRAFT | {"amountSats": 5_000_003})
        assert status == 201, body  # rate limits counted in the process meanwhile; rates as last read
        assert call(stack, "GET", "/api/v1/drafts")[0] == 200
        live, ready, failed, health_failed = probes(stack)
        assert (live, ready, failed, health_failed) == (200, 200, [], ["cache"])
    finally:
        stack["cache"].start()
    assert call(stack, "GET", "/api/v1/drafts")[0] == 200


def test_the_broker_down_loses_no_write_and_readyz_names_it(stack):
    stack["broker"].stop()
    try:
        started = time.monotonic()
        status, _, body = call(stack, "POST", "/api/v1/drafts", DRAFT | {"amountSats": 5_000_001})
        assert status == 201, body  # stored; its webhooks and emails wait in the outbox for the broker
        took = time.monotonic() - started
        assert took < 5, took  # the send after commit gives up quickly
        assert call(stack, "GET", f"/api/v1/drafts/{body['id']}")[0] == 200
        assert probes(stack) == (200, 503, ["broker"], ["broker"])
    finally:
        stack["broker"].start()
    assert probes(stack) == (200, 200, [], [])

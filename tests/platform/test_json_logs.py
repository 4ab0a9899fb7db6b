"""LOG_FORMAT=json: every line a JSON object, with the request id and account id of a request
and the name and id of a Celery task; never an API key."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from config.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)

REQUEST = """
import django
django.setup()
from django.test import Client
response = Client().get("/api/v1/drafts/{missing}", HTTP_AUTHORIZATION="Bearer {key}", HTTP_X_REQUEST_ID="json-logs-1")
assert response.status_code == 404, response.content
"""


def _env() -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "LOG_FORMAT": "json",
    }


def _lines(output: str) -> list[dict]:
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines
    bad = [line for line in lines if not _parses(line)]
    assert not bad, bad  # every line parses
    return [json.loads(line) for line in lines]


def _parses(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


@pytest.mark.slow
def test_a_request_logs_json_lines_with_its_request_id_and_account_and_no_key(owner, make_key):
    key = make_key()
    missing = uuid.uuid4()
    run = subprocess.run(
        [sys.executable, "-c", REQUEST.format(missing=missing, key=key)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    entries = _lines(run.stdout + run.stderr)
    mine = [e for e in entries if e["request_id"] == "json-logs-1"]
    assert mine, entries
    assert any(e["account_id"] == str(owner.pk) and str(missing) in e["message"] for e in mine), mine
    assert key not in run.stdout + run.stderr
    assert key.split("_")[-1][-12:] not in run.stdout + run.stderr  # not even a piece of the secret


@pytest.mark.slow
def test_a_celery_worker_logs_json_lines_with_the_task_name_and_id(tmp_path):
    log = tmp_path / "worker.log"
    worker = subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "celery"),
            "--quiet",  # no banner: it is not a log line (scripts/run.sh passes it with LOG_FORMAT=json)
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"jsonlogs-{uuid.uuid4().hex[:8]}@%h",
        ],
        cwd=ROOT,
        env=_env(),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )
    try:
        celery_app.control.purge()
        task_id = celery_app.send_task("chainwatch.run", args=["Ethereum", "evm"]).id
        deadline = time.monotonic() + 60
        while task_id not in log.read_text() or "succeeded" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            assert worker.poll() is None, log.read_text()
            time.sleep(0.2)
    finally:
        worker.terminate()  # SIGTERM: Celery writes its warm shutdown notice straight to standard output
        worker.wait(20)
    entries = _lines(log.read_text())
    ran = [e for e in entries if e["task_id"] == task_id]
    assert ran and all(e["task_name"] == "chainwatch.run" for e in ran), entries


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, **headers: str) -> int:
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - loopback only
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - loopback only
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.slow
def test_every_process_writes_only_json_lines_and_mcp_lines_carry_the_request_id(tmp_path):
    """The web server (gunicorn), the MCP server (uvicorn), a worker, beat and the chain listener,
    started as scripts/run.sh and docker-compose.yml start them, with LOG_FORMAT=json: every line
    of their output is one JSON object."""
    web_port, mcp_port = _free_port(), _free_port()
    celery = [str(ROOT / ".venv" / "bin" / "celery"), "-A", "config", "--quiet"]
    commands = {
        "web": [
            str(ROOT / ".venv" / "bin" / "gunicorn"), "config.wsgi:application", "--config", "deploy/gunicorn.conf.py",
            "--bind", f"127.0.0.1:{web_port}", "--workers", "1", "--access-logfile", "-",
            "--access-logformat", '%(h)s "%(r)s" %(s)s %(b)s %(M)sms request_id=%({x-request-id}o)s',
        ],
        "mcp": [
            str(ROOT / ".venv" / "bin" / "uvicorn"), "mcp_server.asgi:application", "--host", "127.0.0.1",
            "--port", str(mcp_port), "--workers", "1", "--no-server-header", "--log-config",
            "deploy/uvicorn-logging.json",
        ],
        "worker": [*celery, "worker", "--loglevel", "INFO", "-c", "1", "-n", f"json-{uuid.uuid4().hex[:6]}@%h"],
        "beat": [*celery, "beat", "--loglevel", "INFO", f"--schedule={tmp_path / 'schedule'}"],
        "listener": [sys.executable, "manage.py", "chainwatch_listen"],
    }  # fmt: skip
    env = {**_env(), "DEMO_SIMULATE_PAYMENTS": "false", "HEARTBEAT_INTERVAL_SECONDS": "1"}
    processes = {}
    try:
        for name, command in commands.items():
            out = (tmp_path / f"{name}.out").open("wb")
            err = (tmp_path / f"{name}.err").open("wb")
            processes[name] = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=err)

        def output(name: str) -> str:
            return (tmp_path / f"{name}.out").read_text() + (tmp_path / f"{name}.err").read_text()

        deadline = time.monotonic() + 90
        while not (_port_open(web_port) and _port_open(mcp_port)):
            assert time.monotonic() < deadline, {name: output(name)[-2000:] for name in commands}
            time.sleep(0.3)
        assert _get(f"http://127.0.0.1:{web_port}/healthz", **{"X-Request-Id": "json-web-1"}) in (200, 503)
        assert _get(f"http://127.0.0.1:{mcp_port}/mcp", **{"X-Request-Id": "json-mcp-1"}) in (401, 405, 406)
        # the worker runs what beat sends (config.heartbeat every second)
        while "config.heartbeat" not in output("worker") or "chainwatch" not in output("listener"):
            assert time.monotonic() < deadline, {name: output(name)[-2000:] for name in commands}
            time.sleep(0.3)
    finally:
        for process in processes.values():
            process.send_signal(signal.SIGTERM)
        for process in processes.values():
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)

    for name in commands:
        entries = _lines(output(name))  # every line of stdout and stderr parses as one object
        assert entries, name
    mcp = _lines(output("mcp"))
    assert any(e["request_id"] == "json-mcp-1" for e in mcp), mcp
    web = _lines(output("web"))
    assert any("json-web-1" in e["message"] for e in web), web


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0

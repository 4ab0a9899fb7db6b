"""LOG_FORMAT=json: every line a JSON object, with the request id and account id of a request
and the name and id of a Celery task; never an API key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
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
        worker.terminate()
        worker.wait(20)
    entries = _lines(log.read_text())
    ran = [e for e in entries if e["task_id"] == task_id]
    assert ran and all(e["task_name"] == "chainwatch.run" for e in ran), entries

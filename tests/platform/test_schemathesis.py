"""schemathesis over the live OpenAPI document: every operation, against a real server process.

A gunicorn process serves the test database; a key holding every scope is seeded. The run
is bounded (examples per operation) and seeded, so it is deterministic. It fails on a 5xx,
an undocumented status code, a body that does not match its schema, a wrong content type
or a missing documented header (e.g. Location on a 201).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.db import connection

from accounts.models import User
from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SEED = 20261123
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "12"))
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
        "response_headers_conformance",
    ]
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def live_server_process(transactional_db, tmp_path):
    """gunicorn on a free port, reading the test database; yields its base URL."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
        # Tasks enqueued by the API (webhook dispatch) stay in this process: no worker runs here.
        "CELERY_BROKER_URL": "memory://",
        "BASE_URL": f"http://127.0.0.1:{port}",
        "API_RATE_LIMIT_READS": "100000/min",
        "API_RATE_LIMIT_WRITES": "100000/min",
        "API_AUTH_FAILURES_PER_MINUTE": "100000",
    }
    log = (tmp_path / "gunicorn.log").open("w")
    process = subprocess.Popen(
        [str(BIN / "gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1", "--timeout", "60"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/v1/schema", timeout=5) as response:  # noqa: S310 - loopback
                    if response.status == 200:
                        break
            except OSError:
                pass
            assert process.poll() is None, (tmp_path / "gunicorn.log").read_text()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        log.close()


@pytest.mark.slow
def test_every_operation_conforms_to_the_openapi_document(live_server_process, tmp_path):
    owner = User.objects.create_user("fuzz@example.com", "a long passphrase for fuzzing")
    key = api_key_create(user=owner, name="schemathesis", scopes=list(ALL_SCOPES)).key

    result = subprocess.run(
        [
            str(BIN / "schemathesis"),
            "run",
            f"{live_server_process}/api/v1/schema",
            "--phases",
            os.environ.get("SCHEMATHESIS_PHASES", "examples,coverage,fuzzing"),
            "--max-examples",
            str(MAX_EXAMPLES),
            "--seed",
            str(SEED),
            "--generation-deterministic",
            "--no-shrink",
            "--workers",
            "1",
            "--checks",
            CHECKS,
            "--header",
            f"Authorization: Bearer {key}",
            "--request-timeout",
            "30",
            "--no-color",
            "--output-truncate",
            "true",
        ],
        cwd=tmp_path,
        env={**os.environ, "SCHEMATHESIS_HOOKS": ""},
        capture_output=True,
        text=True,
        timeout=600,
    )

    if os.environ.get("SCHEMATHESIS_OUTPUT"):
        Path(os.environ["SCHEMATHESIS_OUTPUT"]).write_text(result.stdout + result.stderr)
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]

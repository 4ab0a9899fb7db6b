"""schemathesis over the live OpenAPI document: every operation, against a real server process.

A gunicorn process serves the test database; a key holding every scope is seeded (and a
logged-in session for the operations API keys may not call). The run is bounded (cases per
operation) and its generation deterministic, so every run sends the same requests. The
stateful phase follows links schemathesis infers (Location headers, ids in bodies), so
drafts it creates are read, cancelled and requoted too. It fails on a 5xx, an undocumented
status code, a body that does not match its schema, a wrong content type or a missing
documented header (e.g. Location on a 201).
"""

from __future__ import annotations

import json
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
# Deterministic generation: the same cases on every run, no seed or example database needed.
PHASES = "examples,coverage,fuzzing,stateful"
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "10"))
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
        [str(BIN / "gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2", "--timeout", "60"]
        # A request line as long as production's gunicorn takes (deploy/gunicorn.conf.py).
        + ["--limit-request-line", "8190"],
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


def schemathesis(base: str, headers: list[str], operations: list[str], *, include: bool, workdir: Path) -> str:
    """Run schemathesis over the document, with (include) or without (not include) the
    named operation ids; returns its report when it found a problem, else ""."""
    # Methods a path does not serve would each get a 405: already covered by the problem tests.
    (workdir / "schemathesis.toml").write_text("[phases.coverage]\nunexpected-methods = []\n")
    selection = [
        arg for op in operations for arg in ("--include-operation-id" if include else "--exclude-operation-id", op)
    ]
    result = subprocess.run(
        [
            str(BIN / "schemathesis"),
            "run",
            f"{base}/api/v1/schema",
            "--phases",
            os.environ.get("SCHEMATHESIS_PHASES", PHASES),
            "--max-examples",
            str(MAX_EXAMPLES),
            "--generation-deterministic",
            "--no-shrink",
            "--workers",
            "2",
            "--checks",
            CHECKS,
            *[arg for header in headers for arg in ("--header", header)],
            *selection,
            "--request-timeout",
            "30",
            "--no-color",
            "--output-truncate",
            "true",
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if os.environ.get("SCHEMATHESIS_OUTPUT"):
        with Path(os.environ["SCHEMATHESIS_OUTPUT"]).open("a") as output:
            output.write(result.stdout + result.stderr)
    return "" if result.returncode == 0 else result.stdout[-20000:] + result.stderr[-5000:]


def session_cookie(user) -> list[str]:
    """Headers of a logged-in browser session: session cookie, CSRF cookie and token."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    token = "f" * 32
    return [f"Cookie: sessionid={session.session_key}; csrftoken={token}", f"X-CSRFToken: {token}"]


@pytest.mark.slow
@pytest.mark.timeout(900)  # two schemathesis runs; beside another xdist worker they took 270 s on a loaded machine
def test_every_operation_conforms_to_the_openapi_document(live_server_process, tmp_path):
    owner = User.objects.create_user("fuzz@example.com", "a long passphrase for fuzzing")
    key = api_key_create(user=owner, name="schemathesis", scopes=list(ALL_SCOPES)).key
    with urllib.request.urlopen(f"{live_server_process}/api/v1/schema", timeout=10) as response:  # noqa: S310
        document = json.load(response)
    session_only = [
        operation["operationId"]
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and operation.get("x-session-only")
    ]

    # Operations an API key may call, with a key holding every scope; then the session-only
    # ones (API key management) with a logged-in session.
    with_key = schemathesis(
        live_server_process, [f"Authorization: Bearer {key}"], session_only, include=False, workdir=tmp_path
    )
    with_session = schemathesis(
        live_server_process, session_cookie(owner), session_only, include=True, workdir=tmp_path
    )

    assert session_only, "no session-only operation found: the session run would test nothing"
    assert not with_key, with_key
    assert not with_session, with_session

"""The API and a worker run unchanged through PgBouncer in transaction mode (the Debian
package), with DATABASE_TRANSACTION_POOLER=true: drafts created (idempotent and in a batch),
read and listed through gunicorn, and a webhook delivered by a real Celery worker."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create
from tests.ownservers import free_port, stop_group, wait_for_port
from tests.platform.alert_stack import Stack, wait_for
from tests.webhooks.conftest import Receiver, _serve
from webhooks import endpoints

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DRAFT = {"network": "Base", "currency": "USDC", "receiverAddress": "0x8617E340B3D01FA5F11F306F4090FD50E238070D"}


def _pgbouncer(tmp) -> tuple[subprocess.Popen, int]:
    if not shutil.which("pgbouncer"):
        pytest.fail("pgbouncer is missing: scripts/system-deps.sh test installs it")
    db = connection.settings_dict
    port = free_port()
    root = Path(tempfile.mkdtemp(prefix="own-pgbouncer-"))  # not under tmp_path: root's alone
    tmp.joinpath("pgbouncer-dir").write_text(str(root))
    (root / "userlist.txt").write_text(f'"{db["USER"]}" ""\n')
    (root / "pgbouncer.ini").write_text(
        f"[databases]\n{db['NAME']} = host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432} dbname={db['NAME']}\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {root / 'userlist.txt'}\npool_mode = transaction\n"
        # The tests' sessions set synchronous_commit in their startup `options` (tests/settings.py).
        "ignore_startup_parameters = extra_float_digits,options\n"
        f"default_pool_size = 4\nmax_client_conn = 200\nlogfile = {root / 'pgbouncer.log'}\n"
    )
    command = ["pgbouncer", str(root / "pgbouncer.ini")]
    if os.geteuid() == 0:  # pgbouncer refuses to run as root
        shutil.chown(root, "postgres")
        for path in root.iterdir():
            shutil.chown(path, "postgres")
        command = ["runuser", "-u", "postgres", "--", *command]
    process = subprocess.Popen(command, start_new_session=True)
    wait_for_port(port, process=process)
    return process, port


def _call(stack: Stack, key: str, method: str, path: str, body=None, **headers) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{stack.web_port}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_the_api_and_a_worker_run_through_pgbouncer_in_transaction_mode(owner, tmp_path, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    key = api_key_create(user=owner, name="pgbouncer", scopes=list(ALL_SCOPES)).key
    receiver = Receiver()
    server = _serve(receiver)
    endpoints.webhook_create(user=owner, url=receiver.url, events=None)
    bouncer, port = _pgbouncer(tmp_path)
    db = connection.settings_dict
    stack = Stack(
        tmp_path,
        {
            "DATABASE_URL": f"postgres://{db['USER']}@127.0.0.1:{port}/{db['NAME']}",
            "DATABASE_TRANSACTION_POOLER": "true",
        },
    )
    try:
        stack.start_web()
        stack.start_worker()
        stack.start_beat()
        created = []
        for n in range(3):
            status, body = _call(stack, key, "POST", "/api/v1/drafts", DRAFT | {"amountSats": 7_000_000 + n},
                                 **{"Idempotency-Key": f"bouncer-{n}"})  # fmt: skip
            assert status == 201, body
            again, replay = _call(stack, key, "POST", "/api/v1/drafts", DRAFT | {"amountSats": 7_000_000 + n},
                                  **{"Idempotency-Key": f"bouncer-{n}"})  # fmt: skip
            assert again in (200, 201) and replay["id"] == body["id"], replay
            created.append(body["id"])
        items = [{"draft": DRAFT | {"amountSats": 8_000_000 + n}} for n in range(4)]
        items.append({"draft": DRAFT | {"amountSats": 8_100_000}, "idempotencyKey": "bouncer-batch"})
        status, batch = _call(stack, key, "POST", "/api/v1/drafts/batch", {"items": items})
        assert status == 200 and all(r["error"] is None for r in batch), batch
        replay = _call(stack, key, "POST", "/api/v1/drafts/batch", {"items": items[-1:]})[1]
        assert replay[0]["draft"]["id"] == batch[-1]["draft"]["id"]
        for draft_id in created:
            status, read = _call(stack, key, "GET", f"/api/v1/drafts/{draft_id}")
            assert status == 200 and read["id"] == draft_id
        status, listed = _call(stack, key, "GET", "/api/v1/drafts?limit=50")
        assert status == 200
        assert set(created) <= {d["id"] for d in listed["items"]}, listed
        assert len(listed["items"]) == 8
        # The creations' webhooks (draft.created) delivered by the worker, through the pooler
        wait_for(lambda: len(receiver.requests) >= 8, 90, "8 webhook deliveries", stack)
        kinds = {json.loads(r.body)["event"] for r in receiver.requests}
        assert "draft.created" in kinds, kinds
        log = stack.logs()
        assert "prepared statement" not in log and "Traceback" not in log, log
    finally:
        stack.close()
        stop_group(bouncer)
        shutil.rmtree(Path(tmp_path.joinpath("pgbouncer-dir").read_text()), ignore_errors=True)
        server.shutdown()

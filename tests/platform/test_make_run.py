"""`make run`'s launcher serves the service on embedded defaults and stops everything on Ctrl-C."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.mcp.conftest import call_tool

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url: str, *, key: str | None = None, body: dict | None = None) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    request = urllib.request.Request(url, data=data, headers=headers)  # noqa: S310 - loopback only
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - loopback only
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.mark.slow
def test_the_launcher_serves_docs_admin_and_health_then_stops_on_ctrl_c(tmp_path):
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "DJANGO_SETTINGS_MODULE")
    }
    env |= {
        "PORT": str(port),
        "VAR_DIR": str(tmp_path / "var"),
        "DEBUG": "true",
        "SECRET_KEY": "launcher-test-" + "k" * 40,
    }
    process = subprocess.Popen(
        ["scripts/run.sh"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if fetch(f"{base}/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.5)
        status, body = fetch(f"{base}/healthz")
        assert status == 200, body
        assert fetch(f"{base}/swagger")[0] == 200
        assert b"/api/v1/api-keys" in fetch(f"{base}/llms.txt")[1]
        assert fetch(f"{base}/admin/login/")[0] == 200
        assert (tmp_path / "var" / "db.sqlite3").exists()

        key = subprocess.run(
            [
                ".venv/bin/python",
                "manage.py",
                "issue_api_key",
                "--email",
                "shop@example.com",
                "--scopes",
                "rates:read,fees:read,drafts:read,drafts:write",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.strip()
        status, body = fetch(f"{base}/api/v1/rates?ccy=EUR&asset=USDC", key=key)
        assert status == 200 and json.loads(body)["rates"][0]["asset"] == "USDC"
        status, body = fetch(f"{base}/api/v1/fees/schedule", key=key)
        assert status == 200 and json.loads(body)["tiers"][0] == {"upToUsd": 10, "percent": 0.49}
        status, body = fetch(
            f"{base}/api/v1/drafts",
            key=key,
            body={
                "network": "Base",
                "currency": "USDC",
                "fiatCurrency": "EUR",
                "fiatAmount": 25,
                "receiverAddress": "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
            },
        )
        assert status == 201, body
        assert fetch(f"{base}/api/v1/drafts/{json.loads(body)['id']}/status", key=key)[0] == 200
        # The MCP server answers on the same address, with the same key.
        status = call_tool(f"{base}/mcp", key, "get_draft_status", {"id": json.loads(body)["id"]})
        assert not status.is_error and status.structured_content["status"] == "Pending"
    finally:
        os.killpg(process.pid, signal.SIGINT)
        output = process.communicate(timeout=60)[0].decode()
    assert "issue_api_key" in output
    time.sleep(1)
    leftover = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert not leftover, f"processes left running: {leftover}"
    with pytest.raises(OSError):
        fetch(f"{base}/healthz")

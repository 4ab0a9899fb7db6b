"""A real MCP server process (uvicorn) on a free loopback port, on the test database, and
the SDK's own Streamable HTTP client to talk to it."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url() -> str:
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def server_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env |= {
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(),  # the test database this run created
        "DATABASE_CONN_MAX_AGE": "0",
        "CACHE_URL": settings.CACHES["default"]["LOCATION"],
    }
    return env | extra


def start_server(tmp_path: Path, **env: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = open(tmp_path / f"mcp-{port}.log", "wb")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "uvicorn", "mcp_server.asgi:application", "--host", "127.0.0.1", "--port", str(port)],
        cwd=REPO,
        env=server_env(**env),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the MCP server stopped: {(tmp_path / f'mcp-{port}.log').read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.2)
    return process, f"http://127.0.0.1:{port}/mcp"


def stop_server(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture
def mcp_server_with(tmp_path) -> Iterator[Callable[..., str]]:
    """A server of its own for a test that needs other settings (given as environment variables)."""
    processes: list[subprocess.Popen] = []

    def start(**env: str) -> str:
        process, url = start_server(tmp_path, **env)
        processes.append(process)
        return url

    yield start
    for process in processes:
        stop_server(process)


def in_session(url: str, key: str | None, work: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """Run ``work`` in an initialized client session (the SDK's Streamable HTTP client)."""

    async def run() -> Any:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    return await work(session)

    return asyncio.run(run())


def call_tool(url: str, key: str, name: str, arguments: dict[str, Any] | None = None):
    async def work(session: ClientSession):
        await session.list_tools()  # the client then checks structured results against the output schemas
        return await session.call_tool(name, arguments or {})

    return in_session(url, key, work)


def raw_post(url: str, body: dict, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """A plain HTTP POST, for what a client library would hide (status codes, headers)."""
    request = urllib.request.Request(  # noqa: S310 - loopback only
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"} | (headers or {}),
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback only
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}

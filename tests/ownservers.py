"""A test's own PostgreSQL and Redis, on free ports, that the test may stop and start.

Never the shared servers other test runs use: outage tests stop and restart these only.
PostgreSQL refuses to run as root, so its files belong to the `postgres` system user there.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import socketserver
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_in_background(server: socketserver.BaseServer) -> threading.Thread:
    """Serves on a daemon thread that notices `server.shutdown()` within 50 ms (socketserver's
    default poll makes every shutdown wait up to half a second: a test's teardown, each time)."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return thread


def wait_for_port(port: int, limit: float = 60, *, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the process meant to listen on {port} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on {port} after {limit} s")


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class OwnPostgres:
    def __init__(self) -> None:
        if not (PG_BIN / "initdb").exists():
            pytest.skip("PostgreSQL server binaries are not installed")
        self.root = Path(tempfile.mkdtemp(prefix="own-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        subprocess.run(
            _as_postgres([str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-N"]),
            check=True,
            capture_output=True,
        )
        self.start()

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-w", "-t", "60", *args]),
            check=True,
            capture_output=True,
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -h 127.0.0.1 -c fsync=off -c full_page_writes=off"
        self._ctl("-o", options, "-l", str(self.root / "log"), "start")

    def stop(self) -> None:
        self._ctl("-m", "fast", "stop")

    def remove(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass  # already stopped
        shutil.rmtree(self.root, ignore_errors=True)


class OwnRedis:
    def __init__(self) -> None:
        if not shutil.which("redis-server"):
            pytest.skip("redis-server is not installed")
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.start()

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for_port(self.port, process=self.process)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


@contextmanager
def own_postgres():
    server = OwnPostgres()
    try:
        yield server
    finally:
        server.remove()


@contextmanager
def own_redis():
    server = OwnRedis()
    try:
        yield server
    finally:
        server.stop()


def stop_group(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)

"""The service as separate nodes on one machine, for tests/platform/test_many_nodes.py: each node a
process group started with the commands of scripts/run.sh and docker-compose.yml, in a working
directory (and VAR_DIR) of its own, a web node bound to a loopback address of its own
(127.0.0.2, 127.0.0.3, ...: all of 127/8 is loopback on Linux); nothing shared but PostgreSQL
and the broker (Redis, which also holds the cache, as compose has it). Beside them: nginx from
deploy/nginx.conf.template (scripts/nginx-conf.sh) with both web nodes in its upstream, a
JSON-RPC proxy per node in front of anvil that counts the node calls each node makes, and a
webhook receiver that records every POST."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.ownservers import serve_in_background

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def wait_for_port(host: str, port: int, process: subprocess.Popen, log: Path, limit: float = 90) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{log.name} exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing listens on {host}:{port} after {limit} s:\n{log.read_text()[-3000:]}")


class Node:
    """One process group (`start_new_session`): `kill()` is a `kill -9` of all of it."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], workdir: Path) -> None:
        self.name = name
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "metrics").mkdir(exist_ok=True)
        self.log = workdir / "node.log"
        env = env | {"VAR_DIR": str(workdir), "PROMETHEUS_MULTIPROC_DIR": str(workdir / "metrics")}
        self.process = subprocess.Popen(  # noqa: S603
            command,
            cwd=workdir,
            env=env,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # what is left of its group (pool processes)
        except ProcessLookupError:
            pass
        self.process.wait(10)


def web_node(name: str, host: str, port: int, env: dict[str, str], workdir: Path) -> Node:
    return Node(
        name,
        [
            str(BIN / "gunicorn"),
            "config.wsgi:application",
            "--config",
            str(ROOT / "deploy" / "gunicorn.conf.py"),
            "--bind",
            f"{host}:{port}",
            "--workers",
            "2",
            "--graceful-timeout",
            "5",
            "--access-logfile",
            "-",
            "--access-logformat",
            '%(h)s "%(r)s" %(s)s',
        ],
        env,
        workdir,
    )


def worker_node(name: str, env: dict[str, str], workdir: Path) -> Node:
    return Node(
        name,
        [
            str(BIN / "celery"),
            "-A",
            "config",
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            "2",
            "-Q",
            "celery,email",
            "-n",
            f"worker@{name}",
        ],
        env,
        workdir,
    )


def beat_node(name: str, env: dict[str, str], workdir: Path) -> Node:
    return Node(name, [str(BIN / "celery"), "-A", "config", "beat", "--loglevel", "INFO"], env, workdir)


def listener_node(name: str, env: dict[str, str], workdir: Path) -> Node:
    return Node(name, [str(BIN / "python"), str(ROOT / "manage.py"), "chainwatch_listen"], env, workdir)


def nginx(prefix: Path, port: int, web: list[str]) -> tuple[Node, Path | None]:
    """nginx on 127.0.0.1:port rendered by scripts/nginx-conf.sh, both web nodes in one upstream.
    Returns it and the copy of the error documents nginx-conf.sh makes when run as root."""
    prefix.mkdir(parents=True, exist_ok=True)
    render = {
        "NGINX_PREFIX": str(prefix),
        "NGINX_WORKERS": "1",
        "LISTEN": f"127.0.0.1:{port}",
        "NGINX_TLS": "",
        "WEB_UPSTREAM": ",".join(web),
        "MCP_UPSTREAM": web[0],  # no MCP node here: /mcp is not part of this test
    }
    conf = subprocess.run(  # noqa: S603
        ["bash", str(ROOT / "scripts" / "nginx-conf.sh")],
        env=dict(os.environ) | render,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (prefix / "nginx.conf").write_text(conf)
    copy = re.search(r"/tmp/payment-drafts-problems\.[A-Za-z0-9]+", conf)
    executable = shutil.which("nginx") or "/usr/sbin/nginx"
    command = [executable, "-e", "stderr", "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"]
    node = Node("nginx", command, dict(os.environ), prefix)
    return node, Path(copy.group(0)) if copy else None


class RpcCounter:
    """A JSON-RPC proxy to anvil on a port of its own: every HTTP call passing is recorded with
    its time and method (a batch counts each call in it); a WebSocket (the listener's
    subscriptions, on the same port as anvil serves them) is passed through byte for byte, its
    opening recorded as `ws` and each piece the client sends on it (a subscribe, an unsubscribe,
    a ping) as `ws-send`."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.calls: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    parsed = json.loads(body)
                    methods = [c.get("method", "?") for c in (parsed if isinstance(parsed, list) else [parsed])]
                except ValueError:
                    methods = ["?"]
                now = time.monotonic()
                with counter.lock:
                    counter.calls.extend((now, method) for method in methods)
                request = urllib.request.Request(
                    counter.upstream, data=body, headers={"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - anvil on loopback
                    payload = answer.read()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802 - a WebSocket's opening request
                if self.headers.get("Upgrade", "").lower() != "websocket":
                    self.send_error(404)
                    return
                upstream = urllib.parse.urlsplit(counter.upstream)
                node = socket.create_connection((upstream.hostname, upstream.port), timeout=30)
                node.settimeout(None)
                head = self.requestline + "\r\n" + "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
                node.sendall((head + "\r\n").encode())
                counter.record("ws")
                back = threading.Thread(target=_pump, args=(node, self.connection, None), daemon=True)
                back.start()
                _pump(self.connection, node, counter)
                back.join(5)
                node.close()
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        serve_in_background(self.server)

    def record(self, method: str) -> None:
        with self.lock:
            self.calls.append((time.monotonic(), method))

    def between(self, start: float, end: float = float("inf")) -> list[tuple[float, str]]:
        with self.lock:
            return [call for call in self.calls if start <= call[0] < end]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _pump(source: socket.socket, target: socket.socket, counter: RpcCounter | None) -> None:
    """Bytes from source to target until either end closes; each piece read counted as `ws-send`."""
    try:
        while data := source.recv(65536):
            if counter is not None:
                counter.record("ws-send")
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, target):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Receiver:
    """The merchant's webhook endpoint: answers 200 to every POST and records, per POST, the
    event id of its body and its delivery id (webhook-id)."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, str, str]] = []  # (event id, delivery id, event type)
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                with receiver.lock:
                    receiver.posts.append((body["id"], self.headers["webhook-id"], body["event"]))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        serve_in_background(self.server)

    def snapshot(self) -> list[tuple[str, str, str]]:
        with self.lock:
            return list(self.posts)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Prober:
    """Requests through nginx every `every` seconds from a thread: (time, status) of each, 0 when
    no answer came at all."""

    def __init__(self, url: str, key: str, every: float = 0.1) -> None:
        self.url, self.key, self.every = url, key, every
        self.answers: list[tuple[float, int]] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopped.is_set():
            request = urllib.request.Request(self.url, headers={"Authorization": f"Bearer {self.key}"})
            started = time.monotonic()
            try:
                with urllib.request.urlopen(request, timeout=20) as answer:  # noqa: S310 - loopback
                    status = answer.status
            except urllib.error.HTTPError as error:
                status = error.code
            except OSError:
                status = 0
            self.answers.append((started, status))
            self.stopped.wait(self.every)

    def stop(self) -> list[tuple[float, int]]:
        self.stopped.set()
        self.thread.join(30)
        return self.answers

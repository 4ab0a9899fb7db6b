"""The service's processes as compose runs them (gunicorn, a prefork Celery worker, beat, the
chain listener; the worker and the listener serve their own METRICS_PORT, web its /metrics
from a PROMETHEUS_MULTIPROC_DIR of its own), a real Prometheus scraping them every second with
deploy/prometheus-rules.yml loaded, and a TCP relay in front of PostgreSQL that a test can cut
(the database unreachable for the service, not for the test). Used by test_alert_rules.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

from django.conf import settings
from django.db import connection

from tests.ownservers import free_port, stop_group, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"
RULES = ROOT / "deploy" / "prometheus-rules.yml"


class Relay:
    """A TCP relay to a port (PostgreSQL's, web's). `cut()` closes every relayed connection and
    refuses new ones (the database unreachable, as a network partition or a stopped server is
    to the service); one made with `open_at_start=False` refuses until `open` is set."""

    def __init__(self, host: str, port: int, *, open_at_start: bool = True) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open = open_at_start
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        self.open = False
        with self.lock:
            for sock in self.sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.sockets.clear()

    def close(self) -> None:
        self.cut()
        self.listener.close()


def rules_for_a_test(path: Path, thresholds: dict[str, tuple[str, str]]) -> str:
    """deploy/prometheus-rules.yml with every `for:` shortened to 2 s, and per alert in
    `thresholds` one literal of its expression replaced (a threshold in seconds that a test
    cannot wait for): the expressions, metrics and labels are the file's own."""
    text = RULES.read_text()
    text = re.sub(r"for: \d+[smh]", "for: 2s", text)
    for alert, (old, new) in thresholds.items():
        block = re.search(rf"- alert: {alert}\n        expr: (.*)\n", text)
        assert block and old in block.group(1), (alert, old)
        text = text.replace(block.group(0), block.group(0).replace(old, new, 1))
    path.write_text(text)
    return text


class Stack:
    """Starts and stops the processes; `prometheus_alert(name)` is the alert's state."""

    def __init__(self, tmp: Path, env: dict[str, str]) -> None:
        self.tmp = tmp
        db = connection.settings_dict
        self.relay = Relay(db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432))
        self.web_port, self.worker_port, self.listener_port, self.prom_port = (free_port() for _ in range(4))
        # Prometheus reaches web through a relay that refuses until `scraped_from_now()`: it can
        # start with the processes (it applies its targets only after 5 s) while the test's first,
        # slow requests are not yet in any sample it takes.
        self.web_scrape = Relay("127.0.0.1", self.web_port, open_at_start=False)
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "ENV_FILE": "",
            "DATABASE_URL": f"postgres://{db['USER']}@127.0.0.1:{self.relay.port}/{db['NAME']}",
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "CACHE_URL": os.environ.get("CACHE_URL", ""),
            "OUTBOUND_ALLOW_LOOPBACK": "true",
            "HEARTBEAT_INTERVAL_SECONDS": "1",
            "CHAINWATCH_INTERVAL_SECONDS": "1",
            "WEBHOOKS_DISPATCH_INTERVAL_SECONDS": "1",
            "NOTIFICATIONS_EMAIL_INTERVAL_SECONDS": "1",
            "WEBHOOKS_TIMEOUT_SECONDS": "2",
            "LEASE_SECONDS": "3",
            "DEMO_SIMULATE_PAYMENTS": "false",
            "ENABLED_NETWORKS": "Base",  # one network's passes, not eight, on a loaded machine
            **env,
        }
        self.env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        self.processes: dict[str, subprocess.Popen] = {}
        self.cache = None  # an OwnRedis when the test gives the cache its own

    def _start(self, name: str, command: list[str], extra: dict[str, str]) -> subprocess.Popen:
        log = self.tmp / f"{name}.log"
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**self.env, **extra},
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes[name] = process
        return process

    def _metrics_dir(self, name: str) -> str:
        path = self.tmp / f"metrics-{name}"
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
        return str(path)

    def start_all(self) -> None:
        """Web, the worker, beat and the listener started together (their imports overlap),
        then each waited for."""
        for start in (self.start_web, self.start_worker, self.start_beat, self.start_listener):
            start(wait=False)
        wait_for_port(self.web_port, process=self.processes["web"])
        wait_for_port(self.worker_port, process=self.processes["worker"])
        wait_for_port(self.listener_port, process=self.processes["listener"])

    def start_web(self, *, wait: bool = True) -> None:
        web = self._start(
            "web",
            [
                str(BIN / "gunicorn"),
                "config.wsgi:application",
                "--config",
                "deploy/gunicorn.conf.py",
                "--bind",
                f"127.0.0.1:{self.web_port}",
                "--workers",
                "2",
                "--timeout",
                "60",
            ],  # fmt: skip
            {"PROMETHEUS_MULTIPROC_DIR": self._metrics_dir("web")},
        )
        if wait:
            wait_for_port(self.web_port, process=web)

    def start_worker(self, *, wait: bool = True) -> None:
        worker = self._start(
            "worker",
            [
                str(BIN / "celery"),
                "-A",
                "config",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                "2",
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                "INFO",
                "-n",
                f"alerts-{uuid.uuid4().hex[:6]}@%h",
            ],  # fmt: skip
            {"PROMETHEUS_MULTIPROC_DIR": self._metrics_dir("worker"), "METRICS_PORT": str(self.worker_port)},
        )
        if wait:
            wait_for_port(self.worker_port, process=worker)

    def start_beat(self, *, wait: bool = True) -> None:
        self._start(
            "beat",
            [
                str(BIN / "celery"),
                "-A",
                "config",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                str(self.tmp / f"beat-{uuid.uuid4().hex[:6]}"),
            ],  # fmt: skip
            {},
        )

    def start_listener(self, *, wait: bool = True) -> None:
        listener = self._start(
            "listener",
            [str(BIN / "python"), "manage.py", "chainwatch_listen"],
            {"METRICS_PORT": str(self.listener_port)},
        )
        if wait:
            wait_for_port(self.listener_port, process=listener)

    def stop(self, name: str) -> None:
        stop_group(self.processes[name])

    def start_prometheus(self, thresholds: dict[str, tuple[str, str]]) -> None:
        rules = self.tmp / "rules.yml"
        rules_for_a_test(rules, thresholds)
        targets = [self.instance(name) for name in ("web", "worker", "listener")]
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
            "rule_files": [str(rules)],
            "scrape_configs": [{"job_name": "payment-drafts", "static_configs": [{"targets": targets}]}],
        }
        (self.tmp / "prometheus.yml").write_text(json.dumps(config))  # YAML reads JSON
        data = self.tmp / "tsdb"
        data.mkdir()
        prometheus = self._start(
            "prometheus",
            [
                "prometheus",
                f"--config.file={self.tmp / 'prometheus.yml'}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{self.prom_port}",
            ],  # fmt: skip
            {},
        )
        wait_for_port(self.prom_port, process=prometheus)
        wait_for(self._ready, 60, "Prometheus ready", self)

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.prom_port}/-/ready", timeout=5) as response:
                return response.status == 200
        except OSError:  # 503 until its storage and rules are loaded
            return False

    def api(self, path: str) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.prom_port}{path}", timeout=30) as response:
            return json.loads(response.read())

    def query(self, expr: str) -> list[dict]:
        return self.api("/api/v1/query?query=" + urllib.parse.quote(expr))["data"]["result"]

    def alert_states(self, alert: str) -> set[str]:
        alerts = self.api("/api/v1/alerts")["data"]["alerts"]
        return {a["state"] for a in alerts if a["labels"]["alertname"] == alert}

    def firing_instances(self, alert: str) -> set[str]:
        alerts = self.api("/api/v1/alerts")["data"]["alerts"]
        return {
            a["labels"].get("instance", "")
            for a in alerts
            if a["labels"]["alertname"] == alert and a["state"] == "firing"
        }

    def instance(self, name: str) -> str:
        """A process's scrape target, as Prometheus labels it."""
        ports = {"web": self.web_scrape.port, "worker": self.worker_port, "listener": self.listener_port}
        return f"127.0.0.1:{ports[name]}"

    def scraped_from_now(self) -> None:
        """Web's /metrics reachable by Prometheus from now on."""
        self.web_scrape.open = True

    def targets_up(self) -> set[str]:
        active = self.api("/api/v1/targets")["data"]["activeTargets"]
        return {t["labels"]["instance"] for t in active if t["health"] == "up"}

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-2500:]}" for p in sorted(self.tmp.glob("*.log")))

    def close(self) -> None:
        for process in reversed(list(self.processes.values())):
            stop_group(process)
        self.relay.close()
        self.web_scrape.close()


def wait_for(condition, seconds: float, what: str, stack: Stack | None = None):
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}\n{stack.logs() if stack else ''}")
        time.sleep(0.5)

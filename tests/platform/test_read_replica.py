"""A real PostgreSQL streaming replica (a hot standby made by pg_basebackup -R from a primary of
the test's own) serves the reads of lists, exports and charts (DATABASE_REPLICA_URL,
core/replica.py); a caller reads its own writes; a stopped or lagging replica is passed over for
the primary with no error; nothing tries to write to the replica.

The service runs in tests/platform/replica_driver.py, which counts every statement by the
database alias that ran it; the standby also logs every statement it receives (log_statement=all).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import fresh
from tests.ownservers import PG_BIN, OwnPostgres, _as_postgres, free_port

ROOT = Path(__file__).resolve().parents[2]
WRITES = ("INSERT", "UPDATE", "DELETE", "CREATE", "ALTER", "DROP", "TRUNCATE", "LOCK", "NEXTVAL")


class Standby:
    """A hot standby of `primary`, streaming from it, on a port of its own."""

    def __init__(self, primary: OwnPostgres) -> None:
        self.root = primary.root / "standby"
        self.data = self.root / "data"
        self.port = free_port()
        self.root.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        basebackup = [str(PG_BIN / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"]
        subprocess.run(
            _as_postgres([*basebackup, "-D", str(self.data), "-R", "-X", "stream", "-c", "fast"]),
            check=True,
            capture_output=True,
        )
        self.log = self.root / "log"
        self.start()

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/app"

    def _ctl(self, *args: str) -> None:
        command = [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-w", "-t", "60", *args]
        subprocess.run(_as_postgres(command), check=True, capture_output=True)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -h 127.0.0.1 -c hot_standby=on -c log_statement=all"
        self._ctl("-o", options, "-l", str(self.log), "start")

    def stop(self) -> None:
        self._ctl("-m", "immediate", "stop")

    def sql(self, statement: str) -> str:
        command = [str(PG_BIN / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "app"]
        done = subprocess.run([*command, "-Atc", statement], check=True, capture_output=True, text=True)
        return done.stdout.strip()

    def statements(self) -> list[str]:
        """Every statement the standby was sent (its log, log_statement=all)."""
        logged = re.finditer(r"LOG:  (?:statement|execute [^:]*): (.*)", self.log.read_text(errors="replace"))
        return [found[1] for found in logged]


class Driver:
    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "tests/platform/replica_driver.py")],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def __call__(self, do: str, **args: Any) -> dict[str, Any]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({"do": do, **args}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"the driver exited ({self.process.poll()})"
        answer = json.loads(line)
        assert "error" not in answer, answer["error"]
        return answer

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=60)


@pytest.fixture
def servers() -> Iterator[tuple[OwnPostgres, Standby]]:
    primary = OwnPostgres()
    try:
        command = [str(PG_BIN / "psql"), "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"]
        subprocess.run([*command, "-c", "CREATE DATABASE app"], check=True, capture_output=True)
        standby = Standby(primary)
        try:
            yield primary, standby
        finally:
            try:
                standby.stop()
            except subprocess.CalledProcessError:
                pass  # the test stopped it
    finally:
        primary.remove()


@pytest.fixture
def driver(servers) -> Iterator[Driver]:
    primary, standby = servers
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{primary.port}/app",
        "DATABASE_REPLICA_URL": standby.url,
        "DATABASE_REPLICA_MAX_LAG_SECONDS": "3600",
        "CACHE_KEY_PREFIX": f"{os.environ.get('CACHE_KEY_PREFIX', 'test')}-replica-{primary.port}",
    }
    running = Driver(env)
    try:
        yield running
    finally:
        running.close()


def replica_caught_up(driver: Driver, standby: Standby, primary_lsn: str) -> None:
    deadline = time.monotonic() + 30
    while standby.sql(f"SELECT pg_last_wal_replay_lsn() >= '{primary_lsn}'") != "t":
        assert time.monotonic() < deadline, "the standby did not replay the primary's writes"
        time.sleep(0.1)


def primary_lsn(primary: OwnPostgres) -> str:
    command = [str(PG_BIN / "psql"), "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres", "-d", "app"]
    return subprocess.run(
        [*command, "-Atc", "SELECT pg_current_wal_lsn()"], check=True, capture_output=True, text=True
    ).stdout.strip()


def drafts_read(statements: list[str], *marks: str) -> int:
    """How many of `statements` read drafts (and hold every one of `marks`)."""
    return sum(
        sql.startswith("SELECT") and 'FROM "drafts_draft"' in sql and all(mark in sql for mark in marks)
        for sql in statements
    )


# What tells each read's own statement of draft rows from the page's other reads.
NEWEST_FIRST = 'ORDER BY "drafts_draft"."created_at" DESC, "drafts_draft"."id" DESC'
MARKS = {
    "list": (NEWEST_FIRST,),
    "export": ('"drafts_draft"."memo"', "DESC"),
    "dashboard_list": (NEWEST_FIRST,),
    "chart": ('"drafts_draft"."confirmed_at" AT TIME ZONE',),
}


@pytest.mark.slow
def test_lists_exports_and_charts_read_the_replica_with_read_your_writes_and_fallback(servers, driver):
    primary, standby = servers
    driver("setup")
    replica_caught_up(driver, standby, primary_lsn(primary))

    # Lists (API and dashboard), the CSV export and the chart: their draft rows come from the
    # replica (the API list and the export read no draft on the primary at all; a dashboard page
    # also counts drafts for its navigation there).
    for do in ("list", "export", "dashboard_list", "chart"):
        answer = driver(do, caller="B")
        assert answer["status"] == 200, (do, answer)
        assert drafts_read(answer["statements"]["replica"], *MARKS[do]) == 1, (do, answer["statements"])
        assert drafts_read(answer["statements"]["default"], *MARKS[do]) == 0, (do, answer["statements"])
        if do in ("list", "export"):
            assert drafts_read(answer["statements"]["default"]) == 0, (do, answer["statements"])
    assert len(driver("export")["ids"]) == 2
    assert driver("chart")["chart"]

    # The replica stops replaying: caller A writes and its next list has the draft (read from
    # the primary); caller B still reads the replica, which does not have it yet.
    standby.sql("SELECT pg_wal_replay_pause()")
    created = driver("create", caller="A")
    assert created["status"] == 201, created
    assert created["statements"]["replica"] == []  # the write and its reads: the primary only
    own = driver("list", caller="A")
    assert created["id"] in own["ids"]
    assert drafts_read(own["statements"]["default"]) >= 1 and drafts_read(own["statements"]["replica"]) == 0
    other = driver("list", caller="B")
    assert created["id"] not in other["ids"]
    assert drafts_read(other["statements"]["replica"]) >= 1 and drafts_read(other["statements"]["default"]) == 0

    # The same through the MCP server's tool calls: the key that wrote reads its draft.
    made = driver("mcp_create", caller="A", amount=3_000_000)
    assert not made["error_result"] and made["id"], made
    assert made["statements"]["replica"] == []
    own = driver("mcp_list", caller="A")
    assert made["id"] in own["ids"] and created["id"] in own["ids"]
    assert drafts_read(own["statements"]["replica"]) == 0
    other = driver("mcp_list", caller="B")
    assert made["id"] not in other["ids"] and drafts_read(other["statements"]["replica"]) >= 1

    # Replayed past A's write: A reads the replica again, its draft there.
    standby.sql("SELECT pg_wal_replay_resume()")
    replica_caught_up(driver, standby, primary_lsn(primary))
    again = driver("list", caller="A")
    assert created["id"] in again["ids"] and drafts_read(again["statements"]["replica"]) >= 1

    # Lagging beyond DATABASE_REPLICA_MAX_LAG_SECONDS: the primary serves, no error.
    standby.sql("SELECT pg_wal_replay_pause()")
    assert driver("create", caller="A", amount=2_000_000)["status"] == 201
    time.sleep(1.5)
    driver("settings", values={"DATABASE_REPLICA_MAX_LAG_SECONDS": 1})
    lagging = driver("list", caller="B")
    assert lagging["status"] == 200 and len(lagging["ids"]) == 5
    assert drafts_read(lagging["statements"]["default"]) >= 1 and drafts_read(lagging["statements"]["replica"]) == 0
    standby.sql("SELECT pg_wal_replay_resume()")
    driver("settings", values={"DATABASE_REPLICA_MAX_LAG_SECONDS": 3600})

    # Nothing ever tried to write to the replica (a hot standby would refuse it: no refusal logged).
    sent = standby.statements()
    assert any('FROM "drafts_draft"' in sql for sql in sent)
    assert not [sql for sql in sent if sql.lstrip().upper().startswith(WRITES)]
    assert "read-only transaction" not in standby.log.read_text(errors="replace")

    # The replica stopped: every read falls back to the primary, no error.
    standby.stop()
    for do in ("list", "export", "dashboard_list", "chart"):
        answer = driver(do, caller="B")
        assert answer["status"] == 200, (do, answer)
        assert drafts_read(answer["statements"]["default"]) >= 1, (do, answer["statements"])
    assert len(driver("list", caller="B")["ids"]) == 5
    metrics = driver("metrics")
    assert metrics.get("replica/replica", 0) >= 6
    assert metrics.get("primary/own_write", 0) >= 1
    assert metrics.get("primary/replica_lagging", 0) >= 1
    assert metrics.get("primary/replica_down", 0) >= 4


@pytest.mark.parametrize(
    ("database", "replica"),
    [
        ("", "postgres://postgres@127.0.0.1:5432/app"),  # the embedded SQLite default has no replica
        ("postgres://postgres@127.0.0.1:5432/app", "mysql://root@127.0.0.1/app"),
    ],
)
def test_a_replica_that_cannot_be_one_stops_the_service_at_start(tmp_path, database, replica):
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")} | {
        "ENV_FILE": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "start-check-" + "k" * 40,
        "FIELD_ENCRYPTION_KEY": "start-check-" + "f" * 40,
        "VAR_DIR": str(tmp_path / "var"),
        "DATABASE_URL": database,
        "DATABASE_REPLICA_URL": replica,
    }
    check = fresh.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, timeout=60)
    assert check.returncode != 0 and "DATABASE_REPLICA_URL" in check.stderr

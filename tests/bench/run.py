"""Running a bench under bench/ from a test, as `make bench` or a reader of README would, with
this test run's PostgreSQL server and Redis (tests/bench/test_*.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable


def _database_url(name: str) -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{name}"


def _base_name() -> str:
    """This run's test database name (with its xdist worker's suffix): the benches add their own suffixes to it."""
    return connection.settings_dict["NAME"]


def _run(script: str, *args: str, timeout: float = 800) -> str:
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(_base_name()),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CACHE_URL": os.environ.get("CACHE_URL", ""),
        "PYTHONPATH": str(ROOT),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)  # each bench picks its own settings
    result = subprocess.run(  # noqa: S603
        [PYTHON, str(ROOT / "bench" / script), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    assert result.returncode == 0, f"{script} exited {result.returncode}:\n{output}"
    return result.stdout

"""Run a test script against a real SQLite file, the embedded default of `make run`, in a
process of its own (the suite itself runs on PostgreSQL).

Each run starts from a copy of a template file that has every migration applied: migrating a new
SQLite file costs about 3.5 CPU-seconds, a copy nothing. The template is built once (under a file
lock, so the xdist workers build it once between them) in var/test-sqlite/, named after the
content of every migration file and Django's version, so a changed migration makes a new one. The
scripts still run `migrate` first, which finds nothing to do on the copy."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import django

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "var" / "test-sqlite"
MIGRATE = (
    "import django; django.setup(); from django.core.management import call_command; "
    "call_command('migrate', verbosity=0)"
)


def _migrations_digest() -> str:
    digest = hashlib.sha256(django.get_version().encode())
    for path in sorted(ROOT.glob("*/migrations/*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def migrated_template() -> Path:
    """An SQLite file with every migration applied (built if missing)."""
    TEMPLATES.mkdir(parents=True, exist_ok=True)
    template = TEMPLATES / f"{_migrations_digest()}.sqlite3"
    with (TEMPLATES / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not template.exists():
            building = template.with_suffix(f".{os.getpid()}.building")
            building.unlink(missing_ok=True)
            result = subprocess.run(
                [sys.executable, "-c", MIGRATE],
                cwd=ROOT,
                env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "DATABASE_URL": f"sqlite:///{building}"},
                capture_output=True,
                text=True,
                timeout=240,
            )
            assert result.returncode == 0, result.stderr[-3000:]
            building.replace(template)
    return template


def run_on_sqlite(module: str, tmp_path: Path, **env: str) -> Any:
    """Run `python -m module` on a fresh SQLite database (a copy of the migrated template); the
    JSON its last line prints."""
    database = tmp_path / "db.sqlite3"
    shutil.copyfile(migrated_template(), database)
    result = subprocess.run(
        [sys.executable, "-m", module],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": f"sqlite:///{database}", "VAR_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])

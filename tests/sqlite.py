"""Run a test script against a real SQLite file, the embedded default of `make run`, in a
process of its own (the suite itself runs on PostgreSQL)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_on_sqlite(module: str, tmp_path: Path, **env: str) -> Any:
    """Run `python -m module` on a fresh SQLite database; the JSON its last line prints."""
    result = subprocess.run(
        [sys.executable, "-m", module],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "VAR_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])

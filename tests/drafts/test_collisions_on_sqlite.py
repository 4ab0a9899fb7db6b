"""Amount collisions on the embedded default (SQLite) answer 409 or nudge, never 500.

SQLite's IntegrityError names columns where PostgreSQL names the constraint, so the clash is
detected by reading the open drafts again; this runs creation against a real SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_on_sqlite_same_amount_twice_is_a_409_fiat_is_nudged_and_drafts_read_back_whole(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "VAR_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "tests.drafts.sqlite_collisions"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    first, clash, fiat_first, fiat_second, keyed, fees = json.loads(result.stdout.strip().splitlines()[-1])
    assert first["status"] == 201
    assert clash["status"] == 409 and clash["body"]["code"] == "amount_collision"
    assert clash["body"]["openDraftId"] == first["body"]["id"]
    assert fiat_first["status"] == fiat_second["status"] == 201
    assert fiat_second["body"]["amountSats"] == fiat_first["body"]["amountSats"] + 1

    # The statements built once per process read and write SQLite's types right.
    assert keyed["replayed"] == keyed["created"] and keyed["replayHeader"] == "true"
    assert keyed["read"] == keyed["created"] and keyed["drafts"] == 4
    assert fees["isDecimal"] and fees["total"] == fees["expected"] and fees["total"] != "0"

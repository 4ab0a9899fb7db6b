"""Webhook delivery on the embedded default (SQLite): the statements that only PostgreSQL
runs (leasing batches, the one-statement success) have their plain counterparts there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_events_are_delivered_and_every_attempt_recorded_on_sqlite(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "VAR_DIR": str(tmp_path),
        "OUTBOUND_ALLOW_LOOPBACK": "true",
    }
    result = subprocess.run(
        [sys.executable, "-m", "tests.webhooks.sqlite_delivery"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["received"] == 2 and outcome["made"] == 2
    assert outcome["deliveries"] == ["Succeeded", "Succeeded"]
    assert outcome["attempts"] == [["Done", 200], ["Done", 200]]

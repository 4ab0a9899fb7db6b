"""bench/retention_bench.py runs end to end at a tiny size (the 1,000,000-row run is by hand)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_retention_benchmark_reports_the_longest_purge_statement_and_creation_latency():
    result = subprocess.run(
        [sys.executable, "bench/retention_bench.py", "--rows", "5000", "--creations", "100", "--batch", "500"]
        + ["--db-name", f"retention_bench_smoke_{os.getpid()}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "'events': 5000" in result.stdout
    assert "longest purge statement:" in result.stdout
    assert "creation during purge:" in result.stdout
    assert re.search(r"paused \d+\.\d s \(ratio 1\.0\)", result.stdout), result.stdout  # paced as in production

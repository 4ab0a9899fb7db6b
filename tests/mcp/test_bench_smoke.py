"""bench/mcp_bench.py runs end to end (tiny sizes): the layout of make run, REST and MCP."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_mcp_benchmark_measures_rest_and_mcp_through_the_dispatcher():
    db = settings.DATABASES["default"]
    result = subprocess.run(
        [sys.executable, "bench/mcp_bench.py", "--seconds", "1", "--connections", "2", "--workers", "1"]
        + ["--mcp-workers", "1", "--db-name", f"pay_bench_mcp_{os.getpid()}"]
        + ["--pg-url", f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"]
        + ["--cache-url", os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "MCP  get_draft, via nginx" in result.stdout
    assert "REST through the dispatcher / direct" in result.stdout

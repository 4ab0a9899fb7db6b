"""bench/live_bench.py at a small size: one uvicorn holds the waiting payers' long polls, the
database is quiet while they wait, and every payer whose draft is marked Seen is told (the
bench exits non-zero when one never is)."""

from __future__ import annotations

import re

import pytest

from tests.bench.run import _base_name, _run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_live_bench_holds_the_waiters_and_tells_each_payer_of_the_payment():
    out = _run(
        "live_bench.py",
        *("--waiters", "200", "--accounts", "2", "--ramp", "100", "--idle", "2", "--seen", "40"),
        *("--db-name", f"{_base_name()}_live"[:55]),
    )

    held = re.search(r"^([\d,]+) waiters held", out, re.M)
    assert held and int(held[1].replace(",", "")) >= 200, out
    assert re.search(r"uvicorn RSS: \d+ MB idle, \d+ MB holding them \([\d.]+ KB each\)", out), out
    quiet = re.search(r"while they wait: database transactions ([\d.]+)/s", out)
    assert quiet and float(quiet[1]) < 50, out  # 200 waiters reading every 0.25 s would be 800/s
    assert re.search(r"uvicorn CPU \d+% of a core", out), out
    assert re.search(
        r"commit -> payer told: p50 -?\d+ ms\s+p99 -?\d+ ms\s+slowest -?\d+ ms\s+within 1 s: [\d.]+%", out
    ), out

"""Every bench under bench/ runs, briefly and with tiny sizes, so none can rot unnoticed.

Each test starts the bench as `make bench` or a reader of README would, with this test run's
PostgreSQL server and Redis, and checks that it exits 0 and prints its figures. The benches
make their own throwaway databases (named after this run's) and prefix their Redis keys, so
they disturb neither these tests nor other runs sharing the servers.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.bench.run import _base_name, _run

ROOT = Path(__file__).resolve().parents[2]
SMOKE_RUNS = {
    "drafts_bench.py",
    "chainwatch_bench.py",
    "webhooks_bench.py",
    "mcp_bench.py",
    "embedded_bench.py",
    "detection_bench.py",
    "retention_bench.py",
    "scale_bench.py",
    "live_bench.py",
}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_every_bench_has_a_smoke_run_here():
    benches = {path.name for path in (ROOT / "bench").glob("*_bench.py")}
    assert benches == SMOKE_RUNS, "add a smoke run in tests/bench/ for each bench/*_bench.py"


def _drafts_bench(suffix: str, *extra: str) -> str:
    """A few seconds of bench/drafts_bench.py at tiny sizes, in databases of its own."""
    return _run(
        "drafts_bench.py",
        *extra,
        *("--seconds", "1", "--rounds", "1", "--warmup", "1", "--clients", "4", "--threads", "1"),
        *("--workers", "2", "--db-name", f"{_base_name()}_{suffix}"[:55]),
    )


def _assert_figures_of(out: str, apps: tuple[str, str]) -> None:
    for endpoint in ("POST /api/v1/drafts", "GET  /api/v1/drafts/{id}"):
        for app in apps:
            row = re.search(rf"^{re.escape(endpoint)}\s+{app}\s+(\d+)\s+[\d.]+\s+[\d.]+\s+0\s", out, re.M)
            assert row and int(row[1]) > 0, f"no figures for {endpoint} {app}:\n{out}"
    assert re.search(r"POST req/s \d+\.\d\d\s+by CPU \d+\.\d\d", out), out
    assert re.search(r"GET  req/s \d+\.\d\d\s+by CPU \d+\.\d\d", out), out


def test_drafts_bench_prints_project_and_bare_figures_and_their_ratios():
    out = _drafts_bench("drafts_bench", "--instructions", "3")
    _assert_figures_of(out, ("project", "bare"))
    row = r"(\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d\d)\s+(\d+)\s+(\d+)\s+(\d+\.\d\d)$"
    counts = re.search(rf"^\s+project\s+{row}", out, re.M)
    assert counts and int(counts[1]) >= 2, f"no SQL count of a creation:\n{out}"
    assert float(counts[4]) > 0 and float(counts[7]) > 0, f"no CPU per request:\n{out}"
    bare = re.search(rf"^\s+bare\s+{row}", out, re.M)
    assert bare and bare.group(1, 2, 3, 5, 6) == ("2", "0", "0", "2", "0"), (
        f"the bare app does more than its floor:\n{out}"
    )
    # Counted under valgrind: every app's creation and read, and their ratios.
    for app in ("project", "bare"):
        row = re.search(rf"^\s+{app}\s+(\d+)\s+(\d+)$", out, re.M)
        assert row and int(row[1]) > 1000 and int(row[2]) > 1000, f"no instruction counts for {app}:\n{out}"
    assert re.search(r"^\s+project/bare create: \d+\.\d\d$", out, re.M), out


def test_drafts_bench_against_a_revision_serves_that_commit_in_the_bare_apps_place():
    out = _drafts_bench("drafts_against", "--against", "HEAD")
    _assert_figures_of(out, ("project", "HEAD"))
    # The same code on both sides: a creation counts the same statements in each.
    counts = re.findall(r"^\s+(?:project|HEAD)\s+(\d+)\s+(\d+)\s+(\d+)\s", out, re.M)
    assert len(counts) == 2 and counts[0] == counts[1], out
    assert "Compared with the project at HEAD" in out


def test_chainwatch_bench_prints_calls_per_pass_and_per_block_and_checks_they_stay_flat():
    out = _run(
        "chainwatch_bench.py",
        *("--sizes", "10,30", "--fast-backends", "evm", "--fast-seconds", "1.5"),
    )
    chains = ("evm", "evm-eth", "evm-internal", "core", "esplora", "solana", "solana-receivers")
    for backend in (*chains, "lightning", "lightning-lnd", "lightning-lnbits"):
        for size in (10, 30):
            row = re.search(rf"^{re.escape(backend)}\s+{size}\s+(\d+)\s+(\d+)\s+[\d.]+\s+(\d+|-)$", out, re.M)
            assert row, f"no figures for {backend} at {size}:\n{out}"
            assert int(row[1]) > 0 and int(row[2]) > 0, f"{backend} made no calls, so it measured nothing:\n{out}"
            assert (row[3] != "-") == (backend in chains), f"{backend}: a per-block figure only for chains:\n{out}"
        verdict = re.search(rf"^{re.escape(backend)}\s+x[\d.]+\s+(?:x[\d.]+|-)\s+(.+)$", out, re.M)
        assert verdict, f"no 2x check for {backend}:\n{out}"
        assert verdict[1] == "within 2x" or backend == "lightning", f"{backend} grows with open drafts:\n{out}"
    # The listener on a block every 0.4 s for 1.5 s, beside the beat's polling; with the spacing,
    # at most one pass per 0.5 s (plus the one the window opens on).
    minute = {k: int(v) for k, v in re.findall(r"^evm\s+([a-z].+?)\s{2,}(\d+)\s+\d+$", out, re.M)}
    assert set(minute) == {"beat every 15 s (polling)", "per block, no spacing", "per block, 500 ms apart"}, out
    assert all(minute.values()), out
    assert minute["per block, 500 ms apart"] <= (1.5 / 0.5 + 1) * 60 / 1.5, out


def test_webhooks_bench_prints_delivery_rates_isolation_and_fairness():
    out = _run(
        "webhooks_bench.py",
        *("--events", "4", "--rounds", "1", "--requests", "5"),
        *("--slow-endpoints", "3", "--slow-seconds", "2", "--fair-seconds", "2", "--fair-rate", "5"),
    )
    rates = re.findall(r"([\d.]+) deliveries/s", out)
    assert len(rates) == 4 and all(float(rate) > 0 for rate in rates), out
    assert "(only " not in out, f"some deliveries did not arrive:\n{out}"
    assert re.search(r"per delivery: +\d+\.\d\d SQL statements, +\d+\.\d\d commits", out), out
    posts = re.findall(r"^  (https?) +receiver .+ ms +CPU: ours +[\d.]+ ms", out, re.M)
    assert posts == ["http", "http", "https", "https"], f"no cost of an outbound POST:\n{out}"
    healthy = r"^  healthy endpoint (alone|next to 3 endpoints answering after 2 s): +p50 +[\d.]+ s +p99 +[\d.]+ s"
    fairness = re.findall(healthy + r" +\((\d+) of (\d+) delivered\)", out, re.M)
    assert [what for what, _, _ in fairness] == ["alone", "next to 3 endpoints answering after 2 s"], out
    assert all(got == wanted != "0" for _, got, wanted in fairness), f"healthy deliveries missing:\n{out}"


def test_mcp_bench_prints_tool_call_and_rest_figures():
    name = f"{_base_name()}_mcp_bench"[:55]
    out = _run(
        "mcp_bench.py",
        *("--seconds", "1", "--connections", "4", "--workers", "2", "--mcp-workers", "1", "--db-name", name),
        *("--cache-url", os.environ["CACHE_URL"]),
    )
    for measurement in ("fees/schedule, direct", "get_fee_schedule, via nginx", "get_draft, via nginx"):
        row = re.search(rf"{re.escape(measurement)}\s+(\d+)\s+[\d.]+\s+[\d.]+\s+0", out)
        assert row and int(row[1]) > 0, f"no figures for {measurement}:\n{out}"
    assert re.search(r"MCP\s+get_draft / REST GET /api/v1/drafts/\{id\}: \d+\.\d\d by req/s", out), out

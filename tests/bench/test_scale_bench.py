"""bench/scale_bench.py at a tiny size: it loads drafts the way the ten-million run does, prints
every figure of both phases, and its watcher pass matches the payment in both."""

from __future__ import annotations

import re

import pytest

from tests.bench.run import _base_name, _run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_scale_bench_prints_empty_and_full_figures_side_by_side():
    out = _run(
        "scale_bench.py",
        *("--drafts", "3000", "--open", "300", "--accounts", "12", "--samples", "4", "--rounds", "2", "--deep", "50"),
        *("--db-name", f"{_base_name()}_scale"[:55]),
    )

    assert "drafts: 3,0" in out, out  # the loaded drafts and those the bench created
    for name in ("POST /api/v1/drafts", "GET  /api/v1/drafts/{id}", "?status=Pending", "?q=order-7", "overview"):
        row = re.search(rf"^.*{re.escape(name)}.*?\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", out, re.M)
        assert row and all(float(v) > 0 for v in row.groups()), f"no figures for {name}:\n{out}"
    for name in ("POST /api/v1/drafts", "GET  /api/v1/drafts/{id}"):
        rate = (
            rf"{re.escape(name)} rate: empty \d+/s\s+full \d+/s\s+full/empty [\d.]+ \(the two sides in turn, 2 rounds\)"
        )
        assert re.search(rate, out), out
    passes = re.findall(
        r"watcher pass \((empty|full)\): (\d+) JSON-RPC calls, \d+ ms, ([\d,]+) database rows read, "
        r"peak memory \+\d+ MB, payment matched: (\w+)",
        out,
    )
    assert [(label, matched) for label, _calls, _rows, matched in passes] == [("empty", "True"), ("full", "True")], out
    assert all(int(rows.replace(",", "")) > 0 for _label, _calls, rows, _matched in passes), out

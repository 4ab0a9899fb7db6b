"""bench/detection_bench.py, briefly: a file of its own, so `make test` runs it beside the other
benches rather than after them on one worker (tests/bench/test_benches.py)."""

from __future__ import annotations

import re

import pytest

from tests.bench.run import _run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_detection_bench_prints_latency_from_the_block_to_each_place_a_payment_shows():
    out = _run("detection_bench.py", "--payments", "1")  # the figures of one payment: a median and a max
    for measurement in (
        "Seen in the API",
        "draft.seen at the merchant's receiver",
        "the pay page's update (long poll)",
        "Confirmed in the API (12 confirmations)",
    ):
        row = re.search(rf"^{re.escape(measurement)}\s+([\d.]+)s\s+([\d.]+)s$", out, re.M)
        assert row, f"no figures for {measurement}:\n{out}"
        assert 0 < float(row[1]) <= float(row[2]), out

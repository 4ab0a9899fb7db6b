"""A web worker finishes its start-up before its first request (core.runtime.web_process_ready):
the URLconf and its views are imported, and what start-up made is out of the garbage
collector's way, so a full collection during requests walks only what requests made."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, sys
import config.wsgi
print(json.dumps({
    "frozen": gc.get_freeze_count(),
    "tracked": len(gc.get_objects()),
    "views": [name for name in ("drafts.api.views", "paylinks.views", "dashboard.views") if name in sys.modules],
}))
"""


def test_the_wsgi_application_starts_with_its_views_imported_and_its_objects_frozen():
    ran = subprocess.run(  # noqa: S603
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    assert found["views"] == ["drafts.api.views", "paylinks.views", "dashboard.views"]
    assert found["frozen"] > 100_000  # Django, DRF and the project's modules
    assert found["tracked"] < found["frozen"] / 10  # what a collection still walks


ASGI_PROBE = """
import gc, json
import mcp_server.asgi
print(json.dumps({"frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects())}))
"""


def test_the_asgi_application_starts_with_its_objects_frozen():
    """The process holding the pay pages' waiters: each full collection walks what the waiters
    made, not what start-up made."""
    ran = subprocess.run(  # noqa: S603
        [sys.executable, "-c", ASGI_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    assert found["frozen"] > 100_000
    assert found["tracked"] < found["frozen"] / 10

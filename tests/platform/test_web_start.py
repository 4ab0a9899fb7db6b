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
    "web3": "web3" in sys.modules,
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
    assert not found["web3"]  # only the chain watchers import it (about 0.6 s of CPU)


WORKER_PROBE = """
import json, sys
from config.celery import app
app.loader.import_default_modules()  # every app's tasks, as a worker imports them at start
at_start = "web3" in sys.modules
import chainwatch.evm  # the watcher's first EVM pass imports web3, and py_ecc with it
print(json.dumps({"web3_at_start": at_start, "web3_after": "web3" in sys.modules, "limit": sys.getrecursionlimit()}))
"""


def test_a_worker_starts_without_web3_and_keeps_a_sane_recursion_limit_when_it_comes():
    """py_ecc (through web3) raises the recursion limit to 100,000 when imported, and a deeply
    nested JSON answer from a node would then crash the worker instead of raising an error: the
    limit is put back as soon as py_ecc has run, however late it is imported."""
    ran = subprocess.run(  # noqa: S603
        [sys.executable, "-c", WORKER_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    assert found == {"web3_at_start": False, "web3_after": True, "limit": 1000}


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

"""The test suite's own isolation: each run, and each pytest-xdist worker of a run, has a cache
key prefix and broker queues of its own, and empties only its own keys (docs/development.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from django.core.cache import caches

from tests.conftest import own_cache_keys_delete

ROOT = Path(__file__).resolve().parents[2]


def test_emptying_the_cache_between_tests_leaves_another_prefix_in_the_same_redis_database():
    backend = caches["default"]
    client = backend._cache.get_client(write=True)
    foreign = f"another-run-{uuid.uuid4().hex}:1:rate-table"  # another deployment or worker on this database
    client.set(foreign, b"kept", ex=60)
    try:
        backend.set("ours", "gone soon")
        own_cache_keys_delete()
        assert backend.get("ours") is None
        assert client.get(foreign) == b"kept"
    finally:
        client.delete(foreign)


def _test_settings(**env: str) -> list:
    """The cache key prefix and broker key prefix tests/settings.py gives a process with this environment."""
    script = (
        "import json; import tests.settings as s; "
        "print(json.dumps([s.CACHES['default']['KEY_PREFIX'], s.CELERY_BROKER_TRANSPORT_OPTIONS['global_keyprefix']]))"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "CACHE_KEY_PREFIX"))}
    clean |= {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/0", **env}
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def test_each_xdist_worker_has_its_own_cache_prefix_and_broker_queues_and_its_children_keep_them():
    assert _test_settings() == ["test", "test:"]
    assert _test_settings(PYTEST_XDIST_WORKER="gw3") == ["test-gw3", "test-gw3:"]
    # A process the worker starts inherits the suffixed prefix and does not suffix it again
    assert _test_settings(PYTEST_XDIST_WORKER="gw3", CACHE_KEY_PREFIX="test-gw3") == ["test-gw3", "test-gw3:"]

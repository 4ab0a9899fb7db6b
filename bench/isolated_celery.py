"""The project's Celery app, its broker keys prefixed with BENCH_BROKER_PREFIX when set.

A bench's worker, queue and control messages then stay apart from other work sharing the same
Redis database (kombu's `global_keyprefix` covers queues, bindings and the pub/sub channels).
Workers start with `celery -A bench.isolated_celery worker`.
"""

from __future__ import annotations

import os

from config.celery import app

PREFIX = os.environ.get("BENCH_BROKER_PREFIX", "")
if PREFIX:
    app.conf.broker_transport_options = {**(app.conf.broker_transport_options or {}), "global_keyprefix": PREFIX}

__all__ = ["app"]

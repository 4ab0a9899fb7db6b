"""Prometheus metrics (the official prometheus-client), served at /metrics (about/metrics.py).

Counters and histograms are incremented in process, no I/O: with PROMETHEUS_MULTIPROC_DIR set
(`make run` sets it under VAR_DIR; gunicorn's workers and the Celery worker's processes share
it) each process writes its values to memory-mapped files there and a scrape sums them; without
it the process's own registry is served. The backlogs are gauges computed at scrape time (about/metrics.py).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Protocol

from django.http import HttpRequest, HttpResponse
from prometheus_client import Counter, Gauge, Histogram

# Seconds: a draft creation takes milliseconds, a webhook POST up to WEBHOOKS_TIMEOUT_SECONDS.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60)

http_requests = Counter(
    "http_requests", "HTTP requests answered, by URL pattern name, method and status", ["route", "method", "status"]
)
http_request_seconds = Histogram(
    "http_request_duration_seconds", "Time to answer, by URL pattern name", ["route", "method"], buckets=_BUCKETS
)
drafts_created = Counter("drafts_created", "Drafts created, by network and currency", ["network", "currency"])
drafts_confirmed = Counter("drafts_confirmed", "Drafts confirmed, by network and currency", ["network", "currency"])
watcher_pass_seconds = Histogram(
    "chainwatch_pass_duration_seconds", "Duration of a watcher pass", ["network", "family"], buckets=_BUCKETS
)
watcher_pass_errors = Counter("chainwatch_pass_errors", "Watcher passes that failed", ["network", "family"])
watcher_lag_blocks = Gauge(
    "chainwatch_lag_blocks",
    "Blocks (slots) between the node's head and the end of the last pass",
    ["network", "family"],
    multiprocess_mode="mostrecent",
)
watcher_last_pass = Gauge(
    "chainwatch_last_pass_timestamp_seconds",
    "When the last pass that went through ended",
    ["network", "family"],
    multiprocess_mode="max",
)
quorum_disagreements = Counter(
    "chainwatch_quorum_disagreements",
    "Transfers an endpoint disagreed on (said something else or nothing of), by network and endpoint label",
    ["network", "endpoint"],
)
webhook_deliveries = Counter("webhook_deliveries", "Webhook delivery attempts, by outcome", ["outcome"])
webhook_delivery_seconds = Histogram(
    "webhook_delivery_duration_seconds", "Duration of a webhook delivery attempt", buckets=_BUCKETS
)
# The cache down: rate limits counted in each process's memory (core.cache.LocalWindows).
rate_limit_local_counting = Gauge(
    "rate_limit_local_counting",
    "1 while this process counts rate limits in its own memory because the cache does not answer",
    multiprocess_mode="livemax",
)
rate_limit_local_counts = Counter(
    "rate_limit_local_counts", "Rate-limit counts taken in process memory because the cache did not answer"
)
task_failures = Counter("celery_task_failures", "Celery tasks that raised, by task name", ["task"])


class Counted(Protocol):
    """What a draft is counted by (drafts.models.Draft: core imports no app above it)."""

    @property
    def network(self) -> str: ...

    @property
    def currency(self) -> str: ...


class AttemptOutcome(Protocol):
    """What a webhook attempt is counted by (outbound.Response)."""

    @property
    def ok(self) -> bool: ...

    @property
    def status_code(self) -> int | None: ...

    @property
    def duration_ms(self) -> int: ...


def draft_counted(counter: Counter, draft: Counted) -> None:
    counter.labels(draft.network, draft.currency).inc()


def webhook_delivery_counted(outcome: AttemptOutcome) -> None:
    """One finished attempt (an outbound.Response): succeeded, refused (an answer other than
    2xx) or unanswered (no connection, no answer in time, not sent)."""
    label = "succeeded" if outcome.ok else ("refused" if outcome.status_code else "unanswered")
    webhook_deliveries.labels(label).inc()
    webhook_delivery_seconds.observe((outcome.duration_ms or 0) / 1000)


def watcher_pass_counted(network: str, family: str, report: object, *, seconds: float) -> None:
    watcher_pass_seconds.labels(network, family).observe(seconds)
    watcher_last_pass.labels(network, family).set(time.time())
    head, end = getattr(report, "head", None), getattr(report, "end", None)
    if head is not None and end is not None:
        watcher_lag_blocks.labels(network, family).set(max(0, head - end))


def process_dead(pid: int) -> None:
    """A process of the shared directory has exited (gunicorn's child_exit, Celery's pool)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated


def serve_own_port(process: str) -> None:
    """METRICS_PORT set: this process (the Celery worker's main process, the chain listener)
    serves its figures on METRICS_ADDRESS:METRICS_PORT from a thread of its own: with
    PROMETHEUS_MULTIPROC_DIR every process of the directory summed (a prefork worker's pool
    counts in its children), else this process's own registry."""
    from django.conf import settings

    if not settings.METRICS_PORT:
        return
    from prometheus_client import REGISTRY, CollectorRegistry, start_http_server

    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # unannotated upstream
    start_http_server(settings.METRICS_PORT, settings.METRICS_ADDRESS, registry=registry)
    logging.getLogger(__name__).info(
        "%s metrics on http://%s:%s/metrics", process, settings.METRICS_ADDRESS, settings.METRICS_PORT
    )


class RequestMetricsMiddleware:
    """Counts every answer by its URL pattern's name (never the raw path) and status."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = (match.view_name or match.route or "unnamed") if match else "unmatched"
        method = request.method if request.method in _METHODS else "other"
        http_requests.labels(route, method, response.status_code).inc()
        http_request_seconds.labels(route, method).observe(time.perf_counter() - started)
        return response


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

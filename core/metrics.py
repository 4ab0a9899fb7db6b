"""Prometheus metrics (the official prometheus-client), served at /metrics (config/views.py).

Counters and histograms are incremented in process, no I/O: with PROMETHEUS_MULTIPROC_DIR set
(`make run` sets it under VAR_DIR; gunicorn's workers and the Celery worker's processes share
it) each process writes its values to memory-mapped files there and a scrape sums them; without
it the process's own registry is served. The backlogs are gauges computed at scrape time.
"""

from __future__ import annotations

import os
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily

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
webhook_deliveries = Counter("webhook_deliveries", "Webhook delivery attempts, by outcome", ["outcome"])
webhook_delivery_seconds = Histogram(
    "webhook_delivery_duration_seconds", "Duration of a webhook delivery attempt", buckets=_BUCKETS
)
task_failures = Counter("celery_task_failures", "Celery tasks that raised, by task name", ["task"])


def draft_counted(counter: Counter, draft) -> None:
    counter.labels(draft.network, draft.currency).inc()


def webhook_delivery_counted(outcome) -> None:
    """One finished attempt (an outbound.Response): succeeded, refused (an answer other than
    2xx) or unanswered (no connection, no answer in time, not sent)."""
    label = "succeeded" if outcome.ok else ("refused" if outcome.status_code else "unanswered")
    webhook_deliveries.labels(label).inc()
    webhook_delivery_seconds.observe((outcome.duration_ms or 0) / 1000)


def watcher_pass_counted(network: str, family: str, report, *, seconds: float) -> None:
    watcher_pass_seconds.labels(network, family).observe(seconds)
    watcher_last_pass.labels(network, family).set(time.time())
    head, end = getattr(report, "head", None), getattr(report, "end", None)
    if head is not None and end is not None:
        watcher_lag_blocks.labels(network, family).set(max(0, head - end))


class BacklogCollector:
    """Outbox and email backlogs, read from the database when scraped."""

    def collect(self):
        up = GaugeMetricFamily("backlog_read_ok", "1 when the backlogs below could be read from the database")
        try:
            families = list(self._backlogs())
        except Exception:  # the database away: the process's own metrics are still served
            from django.db import connection

            connection.close()
            families = []
        up.add_metric([], 1 if families else 0)
        yield up
        yield from families

    def _backlogs(self):
        from django.utils import timezone

        from notifications.models import EmailNotification, EmailStatus
        from webhooks.models import Delivery, DeliveryStatus

        now = timezone.now()
        pending = Delivery.objects.filter(status=DeliveryStatus.PENDING)
        owed = GaugeMetricFamily("webhook_deliveries_pending", "Webhook deliveries not yet settled")
        owed.add_metric([], pending.count())
        yield owed
        due = GaugeMetricFamily("webhook_deliveries_due", "Webhook deliveries whose next attempt is due now")
        due.add_metric([], pending.filter(next_attempt_at__lte=now).count())
        yield due
        oldest = (
            pending.filter(next_attempt_at__lte=now)
            .order_by("next_attempt_at")
            .values_list("next_attempt_at", flat=True)[:1]
        )
        age = GaugeMetricFamily("webhook_oldest_due_delivery_seconds", "How long the oldest due delivery has waited")
        age.add_metric([], (now - oldest[0]).total_seconds() if oldest else 0)
        yield age
        emails = GaugeMetricFamily("email_outbox_pending", "Emails waiting to be sent")
        emails.add_metric([], EmailNotification.objects.filter(status=EmailStatus.PENDING).count())
        yield emails


class RatesCollector:
    """The rate feed, read from the shared cache when scraped: each provider's failures and
    outliers (payments.rates.health counts them across processes) and whether rates are live."""

    def collect(self):
        from prometheus_client.core import CounterMetricFamily

        from payments.rates.health import rates_health

        try:
            health = rates_health()
        except Exception:  # the cache away: /healthz names it; the other metrics are still served
            return
        live = GaugeMetricFamily("rates_live", "1 when every rate table is fresh from live providers")
        live.add_metric([], 1 if health["live"] else 0)
        yield live
        bundled = GaugeMetricFamily("rates_bundled_in_use", "1 when the bundled, dated table prices")
        bundled.add_metric([], 1 if health["bundledInUse"] else 0)
        yield bundled
        for event, text in (("failures", "Rate provider failures"), ("outliers", "Rate provider prices dropped")):
            family = CounterMetricFamily(f"rates_provider_{event}", text, labels=["provider"])
            for provider, counts in health["providers"].items():
                family.add_metric([provider], counts[event])
            yield family


def exposition() -> bytes:
    """The text format of every metric: all processes' in multiprocess mode, then the backlogs."""
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(registry)
    else:
        from prometheus_client import REGISTRY

        registry = REGISTRY
    backlog = CollectorRegistry(auto_describe=False)
    backlog.register(BacklogCollector())
    backlog.register(RatesCollector())
    return generate_latest(registry) + generate_latest(backlog)


def process_dead(pid: int) -> None:
    """A process of the shared directory has exited (gunicorn's child_exit, Celery's pool)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)


class RequestMetricsMiddleware:
    """Counts every answer by its URL pattern's name (never the raw path) and status."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = (match.view_name or match.route or "unnamed") if match else "unmatched"
        method = request.method if request.method in _METHODS else "other"
        http_requests.labels(route, method, response.status_code).inc()
        http_request_seconds.labels(route, method).observe(time.perf_counter() - started)
        return response


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def metrics_view(request):
    """GET /metrics: the Prometheus text format, for a client on loopback (the address the
    NUM_PROXIES proxies vouch for, as REST's rate limits see it: behind nginx, the real client's)
    or one sending `Authorization: Bearer <METRICS_TOKEN>`. Else 401 (a token is set: send it)
    or 403, as problem+json."""
    import hmac
    import ipaddress

    from django.conf import settings
    from django.http import HttpResponse, JsonResponse
    from prometheus_client import CONTENT_TYPE_LATEST

    from accounts.sessions import client_ip
    from config.problems import problem_document

    def refused(status: int, code: str, detail: str) -> JsonResponse:
        response = JsonResponse(
            problem_document(status, code, detail), status=status, content_type="application/problem+json"
        )
        if status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response

    token = settings.METRICS_TOKEN
    scheme, _, offered = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() == "bearer" and offered:
        if not token or not hmac.compare_digest(offered.strip().encode(), token.encode()):
            return refused(401, "metrics_token_invalid", "This bearer token does not open /metrics.")
    else:
        try:
            loopback = ipaddress.ip_address(client_ip(request.META)).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            if token:
                return refused(401, "metrics_token_required", "Send Authorization: Bearer <METRICS_TOKEN>.")
            return refused(403, "metrics_loopback_only", "/metrics answers loopback clients (or set METRICS_TOKEN).")
    if request.method not in ("GET", "HEAD"):
        return refused(405, "method_not_allowed", "Use GET.")
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)

"""GET /metrics: every process's counters (core/metrics.py) and the backlogs, read from the
database when scraped."""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily


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
            .values_list("next_attempt_at", flat=True)
            .first()
        )
        age = GaugeMetricFamily("webhook_oldest_due_delivery_seconds", "How long the oldest due delivery has waited")
        age.add_metric([], (now - oldest).total_seconds() if oldest else 0)
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


class HeartbeatCollector:
    """The age of beat's last tick and of the last heartbeat a worker ran, read from the shared
    cache when scraped (core/heartbeats.py; /healthz reads the same)."""

    def collect(self):
        from core.heartbeats import BEAT, WORKER, heartbeat_age

        family = GaugeMetricFamily(
            "heartbeat_age_seconds",
            "Seconds since beat's last tick, and since a worker last ran its heartbeat",
            labels=["process"],
        )
        for name in (BEAT, WORKER):
            try:
                age = heartbeat_age(name)
            except Exception:  # the cache away: /healthz names it; the other metrics are still served
                return
            if age is not None:  # never noted: a fresh deployment, as /healthz counts it
                family.add_metric([name], age)
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
    backlog.register(HeartbeatCollector())
    return generate_latest(registry) + generate_latest(backlog)


def metrics_view(request):
    """GET /metrics: the Prometheus text format, for a client on loopback (the address the
    NUM_PROXIES proxies vouch for, as REST's rate limits see it: behind nginx, the real client's)
    or one sending `Authorization: Bearer <METRICS_TOKEN>`. Else 401 (a token is set: send it)
    or 403, as problem+json."""
    from django.conf import settings
    from django.http import HttpResponse, JsonResponse
    from prometheus_client import CONTENT_TYPE_LATEST

    from about.operator import Access, operator_access
    from core.problems import problem_document

    def refused(status: int, code: str, detail: str) -> JsonResponse:
        response = JsonResponse(
            problem_document(status, code, detail), status=status, content_type="application/problem+json"
        )
        if status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response

    token = settings.METRICS_TOKEN
    access = operator_access(request.META, token)
    if access is Access.BAD_TOKEN:
        return refused(401, "metrics_token_invalid", "This bearer token does not open /metrics.")
    if access is Access.PUBLIC:
        if token:
            return refused(401, "metrics_token_required", "Send Authorization: Bearer <METRICS_TOKEN>.")
        return refused(403, "metrics_loopback_only", "/metrics answers loopback clients (or set METRICS_TOKEN).")
    if request.method not in ("GET", "HEAD"):
        return refused(405, "method_not_allowed", "Use GET.")
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)

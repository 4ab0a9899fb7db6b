"""Every rule of deploy/prometheus-rules.yml fires in a real Prometheus when what it watches
breaks, and not before. The service runs as compose runs it (tests/platform/alert_stack.py):
web's /metrics, the worker's and the listener's METRICS_PORT, scraped every second.

The rules are the file's own with two changes, made to a copy: every `for:` is 2 s, and the
thresholds in seconds a test cannot wait for are lowered (THRESHOLDS); the intervals of the
service (heartbeat, watcher, dispatch, rate refresh) are shortened through its settings."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from web3 import Web3

from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create
from drafts.models import Draft
from notifications import kinds
from notifications.services import email_enqueue
from tests.chainwatch.conftest import _start_anvil
from tests.ownservers import OwnRedis
from tests.payments.conftest import _start as start_provider
from tests.payments.conftest import coingecko_payload, open_er_api_payload
from tests.platform.alert_stack import RULES, Stack, wait_for
from tests.webhooks.conftest import Receiver, _serve, record
from webhooks import endpoints
from webhooks.models import EventType

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Thresholds in seconds, lowered in the test's copy (the rule's metric and shape unchanged).
THRESHOLDS = {
    "WatcherStalled": ("> 300", "> 5"),
    "WebhookBacklog": ("> 300", "> 3"),
    "BeatStopped": ("> 60", "> 4"),
    "WorkerStopped": ("> 60", "> 4"),
}
DRAFT = {"network": "Base", "currency": "USDC", "receiverAddress": "0x8617E340B3D01FA5F11F306F4090FD50E238070D"}


@dataclass
class Case:
    """One stack and one break, and the alerts that break must fire: rules watching the same
    failure (the database cut, the node down, the worker stopped, the rate provider down) share
    a stack, so the suite starts one service per failure, not one per rule."""

    name: str
    alerts: dict[str, str]  # each alert, and a PromQL selector that must have a sample before the break
    env: dict[str, str] = field(default_factory=dict)
    anvil: bool = False
    provider: bool = False
    own_cache: bool = False  # a Redis of the test's own for the cache, that the break stops
    seconds: float = 90  # from the break to firing
    instances: tuple[str, ...] = ()  # processes whose own scrape target the alerts must name


class Load:
    """A thread calling `step` every `interval` seconds until stopped."""

    def __init__(self, step: Callable[[int], None], interval: float) -> None:
        self.stop_event = threading.Event()
        self.errors: list[BaseException] = []

        def run() -> None:
            n = 0
            while not self.stop_event.is_set():
                try:
                    step(n)
                except Exception as exc:  # noqa: BLE001 - refusals are part of the load
                    self.errors.append(exc)
                n += 1
                self.stop_event.wait(interval)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(timeout=30)


def call(stack: Stack, key: str, method: str, path: str, body: dict | None = None) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{stack.web_port}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


CASES = [
    Case(
        "DatabaseCut",
        # The database cut does not do: beat, unable to renew its lease, sends nothing to fail.
        {"ServerErrors": 'http_requests_total{route="draft-list"}', "BacklogUnreadable": "backlog_read_ok"},
    ),
    Case(
        "SlowDraftCreation",
        {"SlowDraftCreation": 'http_request_duration_seconds_bucket{route="draft-list",method="POST"}'},
    ),
    Case(
        "NodeDown",
        {
            "WatcherFailing": "chainwatch_last_pass_timestamp_seconds",
            "WatcherStalled": "chainwatch_last_pass_timestamp_seconds",
        },
        anvil=True,
    ),
    Case(
        "WatcherLagging",
        {"WatcherLagging": "chainwatch_lag_blocks"},
        anvil=True,
        env={
            "CHAINWATCH_BLOCKS_PER_PASS": "1",
            "CHAINWATCH_PASSES_PER_RUN": "1",
            "CHAINWATCH_LOG_BLOCKS_PER_CALL": "1",
        },
    ),
    Case(
        "WorkerStopped",
        {
            "WorkerStopped": 'heartbeat_age_seconds{process="worker"}',
            "WebhookBacklog": "webhook_oldest_due_delivery_seconds",
        },
    ),
    Case("WebhooksFailing", {"WebhooksFailing": 'webhook_deliveries_total{outcome="succeeded"}'}),
    Case(
        "EmailBacklog",
        {"EmailBacklog": "email_outbox_pending"},
        env={
            "TESTS_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "EMAIL_HOST": "127.0.0.1",
            "EMAIL_PORT": "9",
            "EMAIL_TIMEOUT": "1",
        },  # fmt: skip
    ),
    # The cache stopped: the heartbeat task raises on each tick.
    Case("TasksFailing", {"TasksFailing": 'heartbeat_age_seconds{process="worker"}'}, own_cache=True),
    Case("BeatStopped", {"BeatStopped": 'heartbeat_age_seconds{process="beat"}'}),
    Case("MetricsDown", {"MetricsDown": "up"}, instances=("web", "listener")),
    Case(
        "RatesDown",
        {"RatesNotLive": "rates_live == 1", "RateProviderFailing": "rates_provider_failures_total"},
        provider=True,
    ),
]


def test_every_rule_of_the_file_has_a_case_and_promtool_passes_it():
    named = {line.split(":", 1)[1].strip() for line in RULES.read_text().splitlines() if "- alert:" in line}
    assert named == {alert for case in CASES for alert in case.alerts}
    checked = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(named)} rules found" in checked.stdout


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_alert_fires_when_what_it_watches_breaks(case: Case, owner, tmp_path, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = True  # the webhook endpoints are local receivers
    key = api_key_create(user=owner, name="alerts", scopes=list(ALL_SCOPES)).key
    cleanup: list[Callable[[], None]] = []
    env = dict(case.env)
    anvil = None
    if case.anvil:
        process, url = _start_anvil(1)
        cleanup.append(lambda: (process.terminate(), process.wait(10)))
        anvil = (process, url)
        env |= {"ENABLED_NETWORKS": "Ethereum", "RPC_URL_ETHEREUM": url}
    provider = None
    if case.provider:
        httpd, provider = start_provider([])
        cleanup.append(httpd.shutdown)
        live = Load(lambda n: _fresh_prices(provider), 1)  # a live provider: prices updated every second
        cleanup.append(live.stop)
        provider.live = live
        env |= {
            "RATES_BUNDLED_ALLOWED": "false",
            "RATES_MIN_SOURCES": "1",
            "RATES_CRYPTO_PROVIDERS": f"coingecko={provider.url}",
            "RATES_FX_PROVIDERS": f"open-er-api={provider.url}",
            "RATES_REFRESH_SECONDS": "5",
            "RATES_MAX_AGE_SECONDS": "10",
            "RATES_HTTP_TIMEOUT_SECONDS": "1",
        }
    cache = None
    if case.own_cache:
        cache = OwnRedis()
        cleanup.append(cache.stop)
        env |= {"CACHE_URL": cache.url(0)}
    stack = Stack(tmp_path, env)
    stack.cache = cache
    try:
        stack.start_prometheus(THRESHOLDS)  # it scrapes web only once the first requests are done
        stack.start_all()
        for n in range(10):  # each gunicorn worker past its first, slow requests before any scrape
            call(stack, key, "POST", "/api/v1/drafts", DRAFT | {"amountSats": 4_000_000 + n})
            call(stack, key, "GET", "/api/v1/drafts")
        stack.scraped_from_now()
        wait_for(lambda: len(stack.targets_up()) == 3, 60, "every target scraped", stack)
        breaks = BREAKS[case.name]
        broken = breaks(stack, key, owner, anvil, provider, before=True)
        if broken:
            cleanup.append(broken)
        # Before: each rule's metric has data, and no alert is pending or firing.
        for reads in case.alerts.values():
            wait_for(lambda reads=reads: stack.query(reads), 90, f"a sample of {reads}", stack)
        time.sleep(4)
        assert not any(stack.alert_states(alert) for alert in case.alerts), stack.api("/api/v1/alerts")
        stopped = breaks(stack, key, owner, anvil, provider, before=False)
        if stopped:
            cleanup.append(stopped)
        instances = {stack.instance(name) for name in case.instances}
        for alert in case.alerts:
            wait_for(
                lambda alert=alert: (
                    "firing" in stack.alert_states(alert) and instances <= stack.firing_instances(alert)
                ),
                case.seconds,
                f"{alert} firing" + (f" for {sorted(instances)}" if instances else ""),
                stack,
            )
    finally:
        for undo in reversed(cleanup):
            undo()
        stack.close()


# Each break is called twice: before=True sets up the healthy state (returns a cleanup or None),
# before=False breaks it (returns a cleanup or None).


def _creations(stack, key, *, interval: float = 0.2) -> Load:
    def step(n: int) -> None:
        body = DRAFT | {"amountSats": 5_000_000 + n + int(time.time() * 1000) % 1_000_000 * 10}
        call(stack, key, "POST", "/api/v1/drafts", body)

    return Load(step, interval)


def server_errors(stack, key, owner, anvil, provider, *, before):
    if before:
        load = Load(lambda n: call(stack, key, "GET", "/api/v1/drafts"), 0.2)
        return load.stop
    # PostgreSQL unreachable: the API answers 503, and every task touching the database raises;
    # /metrics cannot read the backlogs.
    stack.relay.cut()


def slow_creation(stack, key, owner, anvil, provider, *, before):
    if before:
        return _creations(stack, key).stop
    import psycopg
    from django.db import connection

    db = connection.settings_dict
    stop = threading.Event()

    def hold() -> None:  # another session holds the drafts table for 1.5 s at a time
        conninfo = f"host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432} user={db['USER']} dbname={db['NAME']}"
        with psycopg.connect(conninfo, autocommit=True) as conn:
            while not stop.is_set():
                with conn.transaction():
                    conn.execute(f"LOCK TABLE {Draft._meta.db_table} IN EXCLUSIVE MODE")
                    time.sleep(1.5)
                time.sleep(0.1)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return lambda: (stop.set(), thread.join(10))


def watcher_node_down(stack, key, owner, anvil, provider, *, before):
    if not before:
        anvil[0].terminate()  # the node stops answering: every pass fails
        anvil[0].wait(10)


def watcher_lagging(stack, key, owner, anvil, provider, *, before):
    if before:  # an open draft: the watcher scans each block (with none it skips to the head)
        body = {"network": "Ethereum", "currency": "ETH", "receiverAddress": DRAFT["receiverAddress"]}
        status = call(stack, key, "POST", "/api/v1/drafts", body | {"amountSats": 10**15})
        assert status == 201, status
        return None
    if not before:  # the node 1,000 blocks ahead of a watcher that scans one block a pass
        node = Web3(Web3.HTTPProvider(anvil[1], request_kwargs={"timeout": 120}))
        node.provider.make_request("anvil_mine", [hex(1000)])


def webhook_backlog(stack, key, owner, anvil, provider, *, before):
    """The worker stopped: its heartbeat ages, and a due delivery waits."""
    if before:
        receiver = Receiver()
        server = _serve(receiver)
        endpoints.webhook_create(user=owner, url=receiver.url, events=None)
        record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d-before", "status": "Confirmed"})
        wait_for(lambda: receiver.requests, 60, "the first delivery", stack)
        return server.shutdown
    stack.stop("worker")  # nothing sends: the due delivery waits
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d-after", "status": "Confirmed"})


def webhooks_failing(stack, key, owner, anvil, provider, *, before):
    if before:
        receiver = Receiver()
        server = _serve(receiver)
        endpoints.webhook_create(user=owner, url=receiver.url, events=None)
        webhooks_failing.receiver = receiver
        load = Load(lambda n: record(owner, EventType.DRAFT_CONFIRMED, {"draftId": f"d-{n}", "status": "Confirmed"}), 1)
        return lambda: (load.stop(), server.shutdown())
    webhooks_failing.receiver.status = 500  # the receiver refuses every delivery


def email_backlog(stack, key, owner, anvil, provider, *, before):
    if not before:  # mail cannot leave (SMTP refuses) while 51 emails are written
        for n in range(51):
            email_enqueue(user=owner, kind=kinds.SECURITY_NOTICE, context={"event": "password_changed"},
                          dedup_key=f"alerts-{n}")  # fmt: skip


def cache_down(stack, key, owner, anvil, provider, *, before):
    if not before:
        stack.cache.stop()  # the heartbeat task cannot note its time: it raises on every tick


def stop(*names: str):
    def breaks(stack, key, owner, anvil, provider, *, before):
        if not before:
            for name in names:
                stack.stop(name)

    return breaks


def _fresh_prices(provider) -> None:
    provider.answer("/api/v3/simple/price", coingecko_payload(int(time.time())))
    provider.answer("/v6/latest/USD", open_er_api_payload(int(time.time())))


def provider_down(stack, key, owner, anvil, provider, *, before):
    if before:
        wait_for(lambda: stack.query("rates_live == 1"), 60, "live rates", stack)
        return None
    provider.live.stop()
    for path in ("/api/v3/simple/price", "/v6/latest/USD"):
        provider.answer(path, {"error": "down"}, status=503)


BREAKS = {
    "DatabaseCut": server_errors,
    "SlowDraftCreation": slow_creation,
    "NodeDown": watcher_node_down,
    "WatcherLagging": watcher_lagging,
    "WorkerStopped": webhook_backlog,
    "WebhooksFailing": webhooks_failing,
    "EmailBacklog": email_backlog,
    "TasksFailing": cache_down,
    "BeatStopped": stop("beat"),
    "MetricsDown": stop("web", "listener"),
    "RatesDown": provider_down,
}

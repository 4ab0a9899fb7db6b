"""/metrics: the Prometheus text format, counters that move with the work, and who may read it."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from webhooks.models import Delivery, DeliveryStatus

pytestmark = pytest.mark.django_db


def scrape(client: Client | None = None, **extra) -> dict[tuple[str, tuple], float]:
    response = (client or Client()).get("/metrics", **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@override_settings(PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES)
def test_creating_a_draft_moves_the_draft_and_request_counters(api_client, django_capture_on_commit_callbacks):
    before = scrape()
    with django_capture_on_commit_callbacks(execute=True):  # counted once committed
        create_three(api_client)
    after = scrape()
    _check_counted(before, after)


def create_three(api_client) -> None:
    response = api_client.post(
        "/api/v1/drafts",
        {"network": "Ethereum", "currency": "USDC", "amountSats": 5_000_000, "receiverAddress": ADDRESSES["Ethereum"]},
        format="json",
    )
    assert response.status_code == 201, response.json()
    replay_key = {"HTTP_IDEMPOTENCY_KEY": "metrics-1"}
    body = {"network": "Ethereum", "currency": "USDC", "amountSats": 6_000_000}
    body["receiverAddress"] = ADDRESSES["Ethereum"]
    assert api_client.post("/api/v1/drafts", body, format="json", **replay_key).status_code == 201
    assert api_client.post("/api/v1/drafts", body, format="json", **replay_key).status_code == 201  # a replay
    api_client.get(f"/api/v1/drafts/{response.json()['id']}")


def _check_counted(before, after) -> None:
    created = {"network": "Ethereum", "currency": "USDC"}
    # Two drafts written: the replayed key wrote nothing
    assert value(after, "drafts_created_total", **created) - value(before, "drafts_created_total", **created) == 2
    # Requests by route name and status, never the raw path (a draft's id is not a label)
    posted = {"route": "draft-list", "method": "POST", "status": "201"}
    assert value(after, "http_requests_total", **posted) - value(before, "http_requests_total", **posted) == 3
    read = {"route": "draft-detail", "method": "GET", "status": "200"}
    assert value(after, "http_requests_total", **read) - value(before, "http_requests_total", **read) == 1
    assert not any("drafts/" in str(labels) for _, labels in after)
    assert value(after, "http_request_duration_seconds_count", route="draft-list", method="POST") >= 3
    # The webhook outbox and email backlogs are read when scraped
    assert value(after, "webhook_deliveries_pending") == Delivery.objects.filter(status=DeliveryStatus.PENDING).count()
    assert ("email_outbox_pending", ()) in after


def test_a_failed_task_is_counted_by_its_name():
    from celery import shared_task

    @shared_task(name="tests.metrics_fails")
    def fails():
        raise RuntimeError("boom")

    before = value(scrape(), "celery_task_failures_total", task="tests.metrics_fails")
    fails.apply()
    assert value(scrape(), "celery_task_failures_total", task="tests.metrics_fails") == before + 1


def test_another_address_is_refused_without_the_token():
    response = Client(REMOTE_ADDR="203.0.113.7").get("/metrics")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "metrics_loopback_only"


@override_settings(REST_FRAMEWORK={"NUM_PROXIES": 1})
def test_behind_the_proxy_the_forwarded_address_counts_not_the_proxys_loopback():
    # nginx connects from loopback and appends the real client to X-Forwarded-For
    response = Client().get("/metrics", HTTP_X_FORWARDED_FOR="127.0.0.1, 203.0.113.7")
    assert response.status_code == 403
    scrape(HTTP_X_FORWARDED_FOR="127.0.0.1")  # a client on the machine itself, through nginx


@override_settings(METRICS_TOKEN="a-long-metrics-token-for-tests")
def test_the_bearer_token_opens_metrics_from_anywhere_and_a_wrong_one_is_refused():
    remote = Client(REMOTE_ADDR="203.0.113.7")
    scrape(remote, HTTP_AUTHORIZATION="Bearer a-long-metrics-token-for-tests")
    for header in ({}, {"HTTP_AUTHORIZATION": "Bearer a-long-metrics-token-for-test"}):
        response = remote.get("/metrics", **header)
        assert response.status_code == 401
        assert response["Content-Type"] == "application/problem+json"
        assert response["WWW-Authenticate"].startswith("Bearer")
    # A wrong token is refused on loopback too
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 401


def test_a_rate_provider_failure_is_a_metric(settings):
    from payments.rates.health import count

    settings.RATES_CRYPTO_PROVIDERS = ["kraken", "coinbase"]
    before = scrape()
    count("failures", "kraken", error="HTTP 429")
    count("outliers", "coinbase")
    after = scrape()
    failed = value(after, "rates_provider_failures_total", provider="kraken")
    assert failed - value(before, "rates_provider_failures_total", provider="kraken") == 1
    dropped = value(after, "rates_provider_outliers_total", provider="coinbase")
    assert dropped - value(before, "rates_provider_outliers_total", provider="coinbase") == 1
    assert ("rates_live", ()) in after

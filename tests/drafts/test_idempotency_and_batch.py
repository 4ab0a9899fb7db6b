"""Idempotent creation (also under concurrency) and batch creation."""

from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from drafts.models import Draft, IdempotencyKey
from tests.concurrency import run_at_once
from tests.drafts.conftest import ADDRESSES

BODY = {
    "network": "Base",
    "currency": "USDC",
    "receiverAddress": ADDRESSES["Base"],
    "fiatCurrency": "EUR",
    "fiatAmount": 25,
}


@pytest.mark.django_db
def test_a_retry_with_the_same_key_returns_the_same_draft(create):
    first = create(BODY, HTTP_IDEMPOTENCY_KEY="order-1")
    second = create(BODY, HTTP_IDEMPOTENCY_KEY="order-1")
    assert first.status_code == second.status_code == 201
    assert second.json() == first.json()
    assert second["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert second["Location"] == first["Location"] == f"http://testserver/api/v1/drafts/{first.json()['id']}"
    assert Draft.objects.count() == 1


@pytest.mark.django_db
def test_a_key_older_than_the_retention_stands_for_nothing_and_makes_a_new_draft(create, settings):
    first = create(BODY, HTTP_IDEMPOTENCY_KEY="order-old")
    IdempotencyKey.objects.filter(key="order-old").update(
        created_at=timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS, minutes=1)
    )
    again = create({**BODY, "fiatAmount": 26}, HTTP_IDEMPOTENCY_KEY="order-old")
    assert again.status_code == 201 and "Idempotent-Replayed" not in again
    assert again.json()["id"] != first.json()["id"] and Draft.objects.count() == 2
    replay = create({**BODY, "fiatAmount": 26}, HTTP_IDEMPOTENCY_KEY="order-old")
    assert replay["Idempotent-Replayed"] == "true" and replay.json() == again.json()


@pytest.mark.django_db
def test_the_same_key_with_a_different_body_is_422(create):
    create(BODY, HTTP_IDEMPOTENCY_KEY="order-2")
    response = create({**BODY, "fiatAmount": 26}, HTTP_IDEMPOTENCY_KEY="order-2")
    assert response.status_code == 422 and response.json()["code"] == "idempotency_key_reused"
    assert Draft.objects.count() == 1


@pytest.mark.django_db
def test_keys_belong_to_one_account(create, client_with_scopes, other_account):
    create(BODY, HTTP_IDEMPOTENCY_KEY="shared")
    theirs = client_with_scopes("drafts:write", user=other_account).post(
        "/api/v1/drafts", {**BODY, "fiatAmount": 30}, format="json", HTTP_IDEMPOTENCY_KEY="shared"
    )
    assert theirs.status_code == 201
    assert Draft.objects.count() == 2


@pytest.mark.django_db
def test_a_failed_request_is_replayed_as_the_same_error(create):
    bad = {**BODY, "receiverAddress": "0xnope"}
    first = create(bad, HTTP_IDEMPOTENCY_KEY="bad-1")
    second = create(bad, HTTP_IDEMPOTENCY_KEY="bad-1")
    assert first.status_code == second.status_code == 400
    assert second.json() == first.json() and second["Content-Type"] == "application/problem+json"


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "x" * 256, "tab\there"])
def test_malformed_keys_are_400(create, key):
    response = create(BODY, HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 400 and response.json()["code"] == "invalid_idempotency_key"


@pytest.mark.django_db(transaction=True)
def test_a_creation_answers_only_once_its_draft_event_and_stored_answer_are_committed(make_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key('drafts:write')}")
    response = client.post("/api/v1/drafts", BODY, format="json", HTTP_IDEMPOTENCY_KEY="durable-1")
    assert response.status_code == 201
    # Read from another connection: only committed rows are visible there.
    db = connection.settings_dict
    dsn = {"dbname": db["NAME"], "user": db["USER"], "host": db["HOST"], "port": db["PORT"] or 5432}
    with psycopg.connect(**dsn, password=db["PASSWORD"] or None, autocommit=True) as other:
        draft_id = response.json()["id"]
        assert other.execute("SELECT status FROM drafts_draft WHERE id = %s", [draft_id]).fetchone() == ("Pending",)
        events = other.execute("SELECT type FROM webhooks_event WHERE draft_id = %s", [draft_id]).fetchall()
        assert events == [("draft.created",)]
        stored = other.execute(
            "SELECT response_status, response_body::jsonb->>'id' FROM drafts_idempotencykey WHERE key = %s",
            ["durable-1"],
        ).fetchone()
        assert stored == (201, draft_id)


@pytest.mark.django_db
def test_a_server_side_failure_stores_nothing_so_a_retry_with_the_key_runs_again(create, settings):
    settings.RATES_BUNDLED_ALLOWED = False  # and no live rates fetched: no price
    failed = create(BODY, HTTP_IDEMPOTENCY_KEY="retry-1")
    assert failed.status_code == 503 and failed.json()["code"] == "rates_unavailable"
    settings.RATES_BUNDLED_ALLOWED = True
    retried = create(BODY, HTTP_IDEMPOTENCY_KEY="retry-1")
    assert retried.status_code == 201 and "Idempotent-Replayed" not in retried
    assert Draft.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_many_parallel_identical_requests_make_exactly_one_draft_and_all_get_its_answer(make_key):
    key = make_key("drafts:write")

    def send() -> tuple[int, str | None]:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        response = client.post("/api/v1/drafts", BODY, format="json", HTTP_IDEMPOTENCY_KEY="parallel-1")
        body = response.json()
        return response.status_code, body.get("id") or body.get("code")

    results = run_at_once(8, send)
    assert Draft.objects.count() == 1
    draft_id = str(Draft.objects.get().id)
    # A concurrent retry waits for the first request and gets its answer, not a 409 to retry.
    assert results == [(201, draft_id)] * 8, results


@pytest.mark.django_db(transaction=True)
def test_parallel_fiat_drafts_to_one_address_get_distinct_amounts(make_key):
    key = make_key("drafts:write")

    def send() -> int:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        return client.post("/api/v1/drafts", BODY, format="json").status_code

    statuses = run_at_once(6, send)
    assert statuses == [201] * 6
    amounts = list(Draft.objects.values_list("amount_base_units", flat=True))
    assert len(set(amounts)) == 6 and max(amounts) - min(amounts) == 5


@pytest.mark.django_db
def test_a_second_fiat_draft_for_the_same_amount_is_nudged_by_one_unit(create):
    first = create(BODY).json()
    second = create(BODY).json()
    assert second["amountSats"] == first["amountSats"] + 1
    assert second["quote"]["nudgeBaseUnits"] == 1 and first["quote"]["nudgeBaseUnits"] == 0


@pytest.mark.django_db
def test_an_exact_draft_that_would_collide_is_409_naming_the_open_draft(create, api_client):
    body = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 5_000_000}
    first = create(body).json()
    clash = create(body)
    assert clash.status_code == 409
    assert clash.json()["code"] == "amount_collision" and clash.json()["openDraftId"] == first["id"]
    api_client.post(f"/api/v1/drafts/{first['id']}/cancel")
    assert create(body).status_code == 201  # a closed draft no longer blocks the amount


@pytest.mark.django_db
def test_a_batch_makes_one_result_per_item_and_a_bad_item_sinks_nothing(api_client):
    good = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 1_000}
    items = [{"draft": {**good, "amountSats": 1_000 + i}} for i in range(3)]
    items.insert(1, {"draft": {**good, "receiverAddress": "not-an-address"}})
    items.append({"draft": {**good, "amountSats": 2_000}, "idempotencyKey": "batch-a"})
    response = api_client.post("/api/v1/drafts/batch", {"items": items}, format="json")
    assert response.status_code == 200 and "Location" not in response
    results = response.json()
    assert [r["index"] for r in results] == [0, 1, 2, 3, 4]
    assert "draft" not in results[1] and results[1]["error"].startswith("invalid_address")
    assert "receiverAddress" in results[1]["error"]
    assert all(r["error"] is None and r["draft"]["status"] == "Pending" for r in results if r["index"] != 1)
    assert Draft.objects.count() == 4
    again = [{"draft": {**good, "amountSats": 2_000}, "idempotencyKey": "batch-a"}]
    replay = api_client.post("/api/v1/drafts/batch", {"items": again}, format="json").json()
    assert replay[0]["draft"]["id"] == results[4]["draft"]["id"]
    assert Draft.objects.count() == 4


@pytest.mark.django_db
@pytest.mark.parametrize("count", [0, 26])
def test_a_batch_of_zero_or_more_than_25_items_is_400(api_client, count):
    item = {"draft": {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 9}}
    response = api_client.post("/api/v1/drafts/batch", {"items": [item] * count}, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "items"


@pytest.mark.django_db
@pytest.mark.parametrize("body", [{}, {"items": None}])
def test_a_batch_without_items_is_400(api_client, body):
    response = api_client.post("/api/v1/drafts/batch", body, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "items"


@pytest.mark.django_db
def test_a_batch_of_25_is_accepted(api_client):
    items = [
        {"draft": {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 100 + i}}
        for i in range(25)
    ]
    results = api_client.post("/api/v1/drafts/batch", {"items": items}, format="json").json()
    assert len(results) == 25 and all(r["error"] is None for r in results)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement is PostgreSQL's way")
def test_a_creation_outside_any_transaction_is_one_statement_and_a_retry_writes_nothing(make_key, owner, settings):
    from django.test.utils import CaptureQueriesContext

    from webhooks.endpoints import webhook_create
    from webhooks.models import Delivery, Event

    settings.OUTBOUND_ALLOW_LOOPBACK = True
    webhook = webhook_create(user=owner, url="https://127.0.0.1/hooks", events=["draft.created"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key('drafts:write')}")
    with CaptureQueriesContext(connection) as captured:
        first = client.post("/api/v1/drafts", BODY, format="json", HTTP_IDEMPOTENCY_KEY="one-statement")
    assert first.status_code == 201
    statements = [q["sql"] for q in captured.captured_queries]
    writes = [s for s in statements if "INSERT" in s or s in ("BEGIN", "COMMIT")]
    assert len(writes) == 1, writes  # no BEGIN / COMMIT: the one statement is its own transaction
    for table in ("drafts_idempotencykey", "drafts_draft", "webhooks_event", "webhooks_delivery"):
        assert f'INSERT INTO "{table}"' in writes[0]

    retried = client.post("/api/v1/drafts", BODY, format="json", HTTP_IDEMPOTENCY_KEY="one-statement")
    assert retried.status_code == 201 and retried.json() == first.json() and retried["Idempotent-Replayed"]
    assert Draft.objects.count() == 1
    assert list(Event.objects.values_list("type", flat=True)) == ["draft.created"]
    assert list(Delivery.objects.values_list("webhook_id", flat=True)) == [webhook.id]

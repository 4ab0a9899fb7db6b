"""Creation's steps and their explicit results: build writes nothing; write answers the draft,
KEY_TAKEN (nothing written) or, around a try, AMOUNT_TAKEN (the try undone); pay links and
refunds take their Idempotency-Key first in their transaction, so a lost race writes nothing."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from core.api.bodies import _built
from drafts.amounts import AMOUNT_TAKEN, unless_amount_taken
from drafts.api.creation import draft_answer
from drafts.creation import draft_build, draft_plan_for, draft_write
from drafts.idempotency import KEY_TAKEN, KeyClaim, request_fingerprint
from drafts.models import Draft, IdempotencyKey
from drafts.requests import DraftRequest, Origin
from paylinks.api.edge import payment_request_answer
from paylinks.models import PaymentRequest
from paylinks.services import payment_request_create
from payments.enums import FeePlacement
from tests.concurrency import run_at_once
from tests.drafts.conftest import ADDRESSES
from webhooks.models import Event

EXACT = DraftRequest(network="Base", currency="USDC", receiver_address=ADDRESSES["Base"], amount_base_units=2_500_000)


def built(owner, plan, *, amount: int | None = None) -> Draft:
    return draft_build(
        user=owner,
        plan=plan,
        origin=Origin.api(),
        now=timezone.now(),
        draft_id=uuid.uuid4(),
        amount=amount or plan.amount_base_units,
        nudge=0,
        placement=FeePlacement.ACCRUED,
        fee_address=None,
    )


def claim(owner, key: str, body) -> KeyClaim:
    return KeyClaim(user=owner, key=key, fingerprint=request_fingerprint(body), answer=draft_answer)


@pytest.mark.django_db
def test_building_a_draft_reads_and_writes_nothing_and_gives_the_row_to_store(owner):
    plan = draft_plan_for(request=EXACT, origin=Origin.api(), now=timezone.now(), user=owner)
    with CaptureQueriesContext(connection) as captured:
        draft = built(owner, plan)
    assert captured.captured_queries == []
    assert (draft.amount_base_units, draft.receiver_address, draft.user_id) == (2_500_000, ADDRESSES["Base"], owner.pk)
    assert draft.payment_uri.startswith("ethereum:") and not Draft.objects.exists()


@pytest.mark.django_db
def test_a_write_whose_key_already_holds_an_answer_is_refused_and_writes_nothing(owner):
    plan = draft_plan_for(request=EXACT, origin=Origin.api(), now=timezone.now(), user=owner)
    first = draft_write(built(owner, plan), user=owner, announce=True, key=claim(owner, "k-1", {"a": 1}))
    assert isinstance(first, Draft) and json.loads(IdempotencyKey.objects.get(key="k-1").response_body)["id"] == str(
        first.id
    )

    again = draft_write(built(owner, plan, amount=2_500_001), user=owner, announce=True, key=claim(owner, "k-1", {}))
    assert again is KEY_TAKEN
    assert list(Draft.objects.values_list("id", flat=True)) == [first.id]  # neither the draft...
    assert Event.objects.filter(type="draft.created").count() == 1  # ...nor its event


@pytest.mark.django_db
def test_a_try_whose_amount_another_open_draft_took_is_amount_taken_and_undone(owner, settings):
    plan = draft_plan_for(request=EXACT, origin=Origin.api(), now=timezone.now(), user=owner)
    draft_write(built(owner, plan), user=owner, announce=True, key=None)

    taken = unless_amount_taken(
        plan, user=owner, write=lambda: draft_write(built(owner, plan), user=owner, announce=True, key=None)
    )
    assert taken is AMOUNT_TAKEN
    assert Draft.objects.count() == 1 and Event.objects.filter(type="draft.created").count() == 1


@pytest.mark.django_db
def test_a_pay_link_whose_key_is_taken_writes_nothing_and_returns_key_taken(owner):
    options = [{"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]}]
    key = KeyClaim(user=owner, key="link-1", fingerprint="f", answer=payment_request_answer)
    first = payment_request_create(user=owner, fiat_currency="EUR", fiat_amount=Decimal(10), options=options, key=key)
    stored = IdempotencyKey.objects.get(key="link-1")
    assert stored.state == IdempotencyKey.State.DONE and json.loads(stored.response_body)["id"] == str(first.id)

    assert (
        payment_request_create(user=owner, fiat_currency="EUR", fiat_amount=Decimal(10), options=options, key=key)
        is KEY_TAKEN
    )
    assert list(PaymentRequest.objects.values_list("id", flat=True)) == [first.id]


@pytest.mark.django_db(transaction=True)
def test_parallel_identical_pay_link_requests_make_one_link_and_all_get_its_answer(make_key):
    key = make_key("paylinks:write")
    body = {
        "fiatCurrency": "EUR",
        "fiatAmount": 12.5,
        "options": [{"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]}],
    }

    def send() -> tuple[int, str | None]:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        response = client.post("/api/v1/payment-requests", body, format="json", HTTP_IDEMPOTENCY_KEY="link-parallel")
        return response.status_code, response.json().get("id") or response.json().get("code")

    _built.cache_clear()  # the first requests after a start also build the body rule (core.api.bodies)
    results = run_at_once(6, send)
    assert PaymentRequest.objects.count() == 1
    assert results == [(201, str(PaymentRequest.objects.get().id))] * 6, results


@pytest.mark.django_db
def test_the_answer_kept_under_a_key_is_the_body_sent_and_a_replay_sends_the_same(api_client):
    body = {
        "network": "Base",
        "currency": "USDC",
        "receiverAddress": ADDRESSES["Base"],
        "fiatCurrency": "EUR",
        "fiatAmount": 12.5,
        "memo": "caf\u00e9 \U0001f600",  # non-ASCII, which the renderer writes as it is
    }
    sent = api_client.post("/api/v1/drafts", body, format="json", HTTP_IDEMPOTENCY_KEY="encoded-once")
    assert sent.status_code == 201
    kept = IdempotencyKey.objects.get(key="encoded-once").response_body
    assert kept.encode() == sent.content and json.loads(kept)["memo"] == body["memo"]  # the very text sent
    replayed = api_client.post("/api/v1/drafts", body, format="json", HTTP_IDEMPOTENCY_KEY="encoded-once")
    assert replayed["Idempotent-Replayed"] == "true"
    assert replayed.content == sent.content  # byte for byte, key order included
    assert replayed["Location"] == sent["Location"]


@pytest.mark.django_db
def test_an_answer_asked_for_indented_is_indented(api_client):
    body = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 2_500_000}
    sent = api_client.post("/api/v1/drafts", body, format="json", HTTP_ACCEPT="application/json; indent=2")
    assert sent.status_code == 201
    assert sent.content.startswith(b'{\n  "id": ')

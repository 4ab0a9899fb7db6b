"""Idempotency-Key on every POST that creates (docs/idempotency.md): a retry with the same key
and body answers the first response byte for byte and creates nothing more; the same key with
another body is a 422. The documented list, the OpenAPI document and the code agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiKey
from addressbook.models import AddressBookEntry
from drafts.models import Draft, IdempotencyKey
from paylinks.models import PaymentRequest
from recurring.models import RecurringTemplate
from tests.conftest import stepped_up
from tests.drafts.conftest import ADDRESSES
from tests.openapi import document
from wallets.models import ReceivingWallet
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[2] / "docs" / "idempotency.md"
TPUB = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"
TPUB_1 = (
    "tpubDC8msFGeGuwnP2xwTZBBZSie1BLgRAkJhgzpFYTdpGgZNzguXQhNDVWp7mJbHJUjQQvV2myLU9dkx67a7VAUnzY7yT7nvhHj7FgS4oNivvq"
)
BASE_USDC = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 5_000_000}

BASE_OPTION = {"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]}
# path: (a body that creates, another body, the model that must hold exactly one new row, test key?)
CREATIONS = {
    "/api/v1/drafts": (BASE_USDC, BASE_USDC | {"amountSats": 5_000_001}, Draft, False),
    "/api/v1/payment-requests": (
        {"fiatCurrency": "EUR", "fiatAmount": 12, "options": [BASE_OPTION]},
        {"fiatCurrency": "EUR", "fiatAmount": 13, "options": [BASE_OPTION]},
        PaymentRequest,
        False,
    ),
    "/api/v1/webhooks": (
        {"url": "https://hooks.example.com/a"},
        {"url": "https://hooks.example.com/b"},
        Webhook,
        False,
    ),
    "/api/v1/recurring-templates": (
        {"interval": "Weekly", "name": "rent", "draft": BASE_USDC},
        {"interval": "Daily", "name": "rent", "draft": BASE_USDC},
        RecurringTemplate,
        False,
    ),
    "/api/v1/address-book": (
        {"network": "Base", "address": ADDRESSES["Base"], "direction": "Receiving", "label": "shop"},
        {"network": "Base", "address": ADDRESSES["Ethereum"], "direction": "Receiving", "label": "other"},
        AddressBookEntry,
        False,
    ),
    "/api/v1/receiving-wallets": (
        {"network": "Testnet", "descriptor": f"wpkh([73c5da0a/84h/1h/0h]{TPUB}/0/*)"},
        {"network": "Testnet", "descriptor": f"wpkh([73c5da0a/84h/1h/1h]{TPUB_1}/0/*)"},
        ReceivingWallet,
        True,
    ),
}


@pytest.fixture
def hooks_resolve(fake_dns):
    fake_dns.answers["hooks.example.com"] = ["93.184.216.34"]
    return fake_dns


def keyed(make_key, *, test: bool) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(livemode=not test)}")
    return client


@pytest.mark.parametrize("path", sorted(CREATIONS))
def test_a_retry_answers_the_first_response_byte_for_byte_and_creates_once(path, make_key, hooks_resolve):
    body, other, model, test = CREATIONS[path]
    client = keyed(make_key, test=test)
    before = model.objects.count()
    first = client.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code in (200, 201), first.content
    again = client.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert (again.status_code, again.content) == (first.status_code, first.content)
    assert again["Idempotent-Replayed"] == "true"
    assert model.objects.count() == before + 1
    reused = client.post(path, other, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert reused.status_code == 422 and reused.json()["code"] == "idempotency_key_reused"
    assert model.objects.count() == before + 1
    fresh = client.post(path, other, format="json", HTTP_IDEMPOTENCY_KEY="k-2")
    assert fresh.status_code == first.status_code, fresh.content
    assert model.objects.count() == before + 2


def test_a_refusal_is_kept_under_its_key_too(api_client):
    refused = api_client.post(
        "/api/v1/fees/accrued/settle", {"currency": "USDC", "network": "Base"}, format="json", HTTP_IDEMPOTENCY_KEY="s"
    )
    assert refused.status_code in (400, 409), refused.content
    again = api_client.post(
        "/api/v1/fees/accrued/settle", {"currency": "USDC", "network": "Base"}, format="json", HTTP_IDEMPOTENCY_KEY="s"
    )
    assert (again.status_code, again.content) == (refused.status_code, refused.content)
    assert again["Idempotent-Replayed"] == "true"


def test_an_api_key_is_created_once_and_its_replayed_answer_is_stored_encrypted(client, owner):
    stepped_up(client, owner)
    body = {"name": "ci", "scopes": ["drafts:read"]}
    first = client.post("/api/v1/api-keys", body, content_type="application/json", HTTP_IDEMPOTENCY_KEY="key-1")
    assert first.status_code == 200, first.content
    again = client.post("/api/v1/api-keys", body, content_type="application/json", HTTP_IDEMPOTENCY_KEY="key-1")
    assert again.content == first.content and ApiKey.objects.filter(user=owner).count() == 1
    stored = IdempotencyKey.objects.get(user=owner).response_body
    assert first.json()["key"] not in stored  # the key, shown once, is not kept in the clear


def test_a_webhook_secret_in_a_replayed_answer_is_stored_encrypted(api_client, owner, hooks_resolve):
    first = api_client.post(
        "/api/v1/webhooks", {"url": "https://hooks.example.com/c"}, format="json", HTTP_IDEMPOTENCY_KEY="w"
    )
    assert first.status_code == 200, first.content
    assert first.json()["secret"] not in IdempotencyKey.objects.get(user=owner).response_body


def creating_posts() -> set[str]:
    """Every POST of the OpenAPI document that takes an Idempotency-Key header."""
    return {
        path
        for path, operations in document()["paths"].items()
        if any(p["name"] == "Idempotency-Key" for p in operations.get("post", {}).get("parameters", []))
    }


def test_the_documented_list_is_what_the_openapi_document_and_the_server_take():
    documented = set(re.findall(r"^\| `POST (/api/v1/[^`]+)` \|", DOC.read_text(), re.M))
    assert documented == creating_posts()
    assert set(CREATIONS) | {"/api/v1/refunds", "/api/v1/fees/accrued/settle", "/api/v1/api-keys"} == documented

"""The hosted claim page without a browser: headers, the form post, errors next to the field."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from refunds.models import Refund
from tests.refunds.conftest import CUSTOMER

pytestmark = pytest.mark.django_db


@pytest.fixture
def refund(paid_draft, issue) -> dict:
    response = issue(paid_draft(), full=True, reason="Returned: wrong size")
    assert response.status_code == 201, response.json()
    return response.json()


def test_the_page_shows_the_refund_under_a_strict_policy(refund):
    assert refund["claimUrl"].endswith(path_of(refund))
    response = Client().get(path_of(refund))
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "'unsafe-inline'" not in policy
    assert response["Referrer-Policy"] == "no-referrer" and response["Cache-Control"] == "no-store"
    html = response.content.decode()
    assert "25.000000\xa0USDC" in html and "Returned: wrong size" in html
    assert 'name="refund_address"' in html and "<script>" not in html and "style=" not in html


def path_of(refund: dict) -> str:
    return "/refund/" + refund["claimUrl"].rsplit("/", 1)[1]


def test_a_form_post_claims_it_and_redirects_back(refund):
    response = Client().post(path_of(refund), {"refund_address": f"  {CUSTOMER['Ethereum']} "})
    assert response.status_code == 303 and response["Location"] == path_of(refund)
    assert Refund.objects.get().refund_address == CUSTOMER["Ethereum"]
    page = Client().get(path_of(refund)).content.decode()
    assert "The merchant is reviewing your refund." in page and CUSTOMER["Ethereum"] in page
    assert 'name="refund_address"' not in page  # claimed once


def test_an_address_of_another_network_is_an_error_next_to_the_field(refund):
    response = Client().post(path_of(refund), {"refund_address": CUSTOMER["Mainnet"]})
    assert response.status_code == 422
    html = response.content.decode()
    assert 'aria-invalid="true"' in html and 'id="refund-address-error"' in html
    assert 'aria-describedby="refund-address-help refund-address-error"' in html
    assert f'value="{CUSTOMER["Mainnet"]}"' in html  # kept for correcting
    assert Refund.objects.get().status == "Claimable"


def test_closed_and_unknown_links_say_what_happened(refund, api_client):
    Refund.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    assert "This refund link has expired." in Client().get(path_of(refund)).content.decode()
    late = Client().post(path_of(refund), {"refund_address": CUSTOMER["Ethereum"]})
    assert late.status_code == 200 and "ask the merchant for a new one" in late.content.decode()
    missing = Client().get("/refund/" + "n" * 43)
    assert missing.status_code == 404 and "Refund link not found" in missing.content.decode()


def test_the_page_shares_the_checkouts_per_address_budget(refund, settings):
    settings.CHECKOUT_RATE_LIMITS = {"read": "2/min", "write": "2/min"}
    client = Client()
    assert [client.get(path_of(refund)).status_code for _ in range(2)] == [200, 200]
    refused = client.get(path_of(refund))
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert "Too many requests" in refused.content.decode()

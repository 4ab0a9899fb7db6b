"""No account can use up what every account shares: each per-account resource has a cap of its
own (docs/security.md, "Tenant vs tenant"), and while account A sits at its cap, account B is
served as usual. Simulated payments (REST, MCP, a test pay page's button) spend an account
budget of their class (core/ratelimits.py) across all the account's keys, as PDFs do
(tests/drafts/test_cost_limits.py); the pay page's long poll is capped per account
(tests/paylinks/test_pay_page_live.py)."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from paylinks.models import PaymentRequest
from tests.drafts.conftest import ADDRESSES

pytestmark = pytest.mark.django_db

DRAFT = {"network": "Sepolia", "currency": "USDC", "receiverAddress": ADDRESSES["Sepolia"], "amountSats": 25_000_000}


@pytest.fixture(autouse=True)
def _settings(settings):
    settings.API_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}
    settings.CHECKOUT_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}


def keyed(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def draft_of(client: APIClient, **body) -> str:
    response = client.post("/api/v1/drafts", DRAFT | body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_an_account_at_its_test_helper_cap_leaves_another_accounts_simulations_served(
    make_key, other_account, settings
):
    settings.API_COST_RATE_LIMITS = {
        **settings.API_COST_RATE_LIMITS,
        "test-helper": {"key": "10/min", "account": "2/min"},
    }
    a1, a2 = keyed(make_key(livemode=False)), keyed(make_key(livemode=False))
    b = keyed(make_key(user=other_account, livemode=False))
    a_drafts = [draft_of(a1, amountSats=25_000_000 + n) for n in range(3)]

    assert a1.post(f"/api/v1/test-helpers/drafts/{a_drafts[0]}/pay").status_code == 200
    assert a2.post(f"/api/v1/test-helpers/drafts/{a_drafts[1]}/expire").status_code == 200
    refused = a2.post(f"/api/v1/test-helpers/drafts/{a_drafts[2]}/pay")
    assert refused.status_code == 429 and (refused.json()["limit"], refused.json()["per"]) == ("test-helper", "account")
    assert int(refused["Retry-After"]) >= 1

    paid = b.post(f"/api/v1/test-helpers/drafts/{draft_of(b)}/pay")
    assert paid.status_code == 200 and paid.json()["status"] == "Confirmed"


def test_a_test_pay_pages_button_spends_its_merchants_budget_not_another_merchants(make_key, other_account, settings):
    settings.API_COST_RATE_LIMITS = {
        **settings.API_COST_RATE_LIMITS,
        "test-helper": {"key": "10/min", "account": "1/min"},
    }
    link_body = {
        "fiatCurrency": "EUR",
        "fiatAmount": 18.5,
        "options": [{"currency": "USDC", "network": "Sepolia", "receiverAddress": ADDRESSES["Sepolia"]}],
    }
    a = keyed(make_key(livemode=False))
    b = keyed(make_key(user=other_account, livemode=False))
    links = {}
    for name, client in (("a1", a), ("a2", a), ("b", b)):
        links[name] = client.post("/api/v1/payment-requests", link_body, format="json").json()["token"]
        Client().post(f"/pay/{links[name]}/select", {"option": "USDC:Sepolia:SingleOutput"})

    payer = Client()
    assert payer.post(f"/pay/{links['a1']}/simulate").status_code == 303
    spent = payer.post(f"/pay/{links['a2']}/simulate")
    assert spent.status_code == 429 and int(spent["Retry-After"]) >= 1
    assert PaymentRequest.objects.select_related("draft").get(token=links["a2"]).draft.status == "Pending"

    assert payer.post(f"/pay/{links['b']}/simulate").status_code == 303
    assert PaymentRequest.objects.get(token=links["b"]).status == "Paid"

"""For every MCP tool, the same input through REST and through MCP gives the same body
(success bodies and problem documents alike): one implementation behind both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiKey
from accounts.scopes import ALL_SCOPES
from accounts.services import PREFIX_LENGTH, api_key_create
from mcp_server.tools import TOOLS
from tests.drafts.conftest import ADDRESSES
from tests.mcp.conftest import call_tool

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BASE_USDC = {
    "network": "Base",
    "currency": "USDC",
    "receiverAddress": ADDRESSES["Base"],
    "fiatCurrency": "EUR",
    "fiatAmount": 25,
}
TESTNET_BTC = {"network": "Testnet", "currency": "BTC", "receiverAddress": ADDRESSES["Testnet"], "amountSats": 150_000}


@dataclass
class Both:
    url: str
    key: str
    rest: APIClient

    def mcp(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        result = call_tool(self.url, self.key, name, arguments)
        body = result.structured_content
        return body["result"] if set(body) == {"result"} else body

    def get(self, path: str, **query) -> Any:
        return self.rest.get(path, query).json()

    def post(self, path: str, body: Any = None, **headers) -> Any:
        return self.rest.post(path, body, format="json", **headers).json()

    def draft(self, body: dict = BASE_USDC) -> dict:
        response = self.rest.post("/api/v1/drafts", body, format="json")
        assert response.status_code == 201, response.json()
        return response.json()


def create_draft(both: Both):
    mcp = both.mcp("create_draft", BASE_USDC | {"idempotency_key": "parity-1"})
    rest = both.post("/api/v1/drafts", BASE_USDC, HTTP_IDEMPOTENCY_KEY="parity-1")  # replays the MCP result
    bad = BASE_USDC | {"receiverAddress": "0x12", "amountSats": -1}
    return [(rest, mcp), (both.post("/api/v1/drafts", bad), both.mcp("create_draft", bad))]


def create_drafts_batch(both: Both):
    items = [{"draft": BASE_USDC | {"fiatAmount": 40}, "idempotencyKey": "b-1"}, {"draft": {"network": "Nowhere"}}]
    mcp = both.mcp("create_drafts_batch", {"items": items})
    return [(both.post("/api/v1/drafts/batch", {"items": items}), mcp)]


def by_id(name: str, path: str, body: dict = BASE_USDC) -> Callable[[Both], list]:
    def check(both: Both):
        draft = both.draft(body)
        return [(both.get(path.format(id=draft["id"])), both.mcp(name, {"id": draft["id"]}))]

    return check


def state_change(name: str, path: str) -> Callable[[Both], list]:
    """A change through MCP answers what REST then reads; a refused repeat is the same problem."""

    def check(both: Both):
        draft = both.draft()
        first = both.mcp(name, {"id": draft["id"]})
        pairs = [(both.post(path.format(id=draft["id"])), both.mcp(name, {"id": draft["id"]}))]
        if "type" not in first:  # it succeeded: REST reads the same draft
            pairs.append((both.get(f"/api/v1/drafts/{draft['id']}"), first))
        return pairs

    return check


def list_drafts(both: Both):
    both.draft()
    both.draft(TESTNET_BTC)
    query = {"pageSize": 1, "page": 2, "network": "Base"}
    return [
        (both.get("/api/v1/drafts", pageSize=1), both.mcp("list_drafts", {"pageSize": 1})),
        (both.get("/api/v1/drafts", **query), both.mcp("list_drafts", query)),
        (both.get("/api/v1/drafts", status="Nope"), both.mcp("list_drafts", {"status": "Nope"})),
    ]


def plain(name: str, path: str, **query) -> Callable[[Both], list]:
    return lambda both: [(both.get(path, **query), both.mcp(name, query))]


def settle_accrued_fees(both: Both):
    body = {"currency": "USDC", "network": "Base"}
    return [
        (both.post("/api/v1/fees/accrued/settle", body), both.mcp("settle_accrued_fees", body)),
        (
            both.post("/api/v1/fees/accrued/settle", {"currency": "DOGE"}),
            both.mcp("settle_accrued_fees", {"currency": "DOGE"}),
        ),
    ]


def quote_fee(both: Both):
    def unstamped(body: dict) -> dict:  # the quote is locked at the time of each call
        return body | {"quote": body["quote"] | {"lockedAt": None, "expiresAt": None}} if "quote" in body else body

    body = {"network": "Testnet", "currency": "BTC", "amountSats": 10_000}
    bad = {"network": "Base", "currency": "USDT", "amountSats": 5}
    return [
        (unstamped(both.post("/api/v1/fees/quote", body)), unstamped(both.mcp("quote_fee", body))),
        (both.post("/api/v1/fees/quote", bad), both.mcp("quote_fee", bad)),
    ]


PAY_LINK = {
    "fiatCurrency": "EUR",
    "fiatAmount": 40,
    "options": [
        {"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]},
        {"currency": "BTC", "network": "Testnet", "receiverAddress": ADDRESSES["Testnet"]},
    ],
    "orderId": "order-9",
}


def create_payment_request(both: Both):
    mcp = both.mcp("create_payment_request", PAY_LINK | {"idempotency_key": "link-1"})
    rest = both.post("/api/v1/payment-requests", PAY_LINK, HTTP_IDEMPOTENCY_KEY="link-1")  # replays the MCP result
    bad = PAY_LINK | {"options": [{"currency": "USDT", "network": "Base", "receiverAddress": ADDRESSES["Base"]}]}
    return [(rest, mcp), (both.post("/api/v1/payment-requests", bad), both.mcp("create_payment_request", bad))]


def pay_link(both: Both) -> dict:
    response = both.rest.post("/api/v1/payment-requests", PAY_LINK, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def get_payment_request(both: Both):
    link = pay_link(both)
    path = f"/api/v1/payment-requests/{link['id']}"
    return [(both.get(path), both.mcp("get_payment_request", {"id": link["id"]}))]


def list_payment_requests(both: Both):
    pay_link(both)
    pay_link(both)
    return [
        (both.get("/api/v1/payment-requests", pageSize=1), both.mcp("list_payment_requests", {"pageSize": 1})),
        (both.get("/api/v1/payment-requests", status="Open"), both.mcp("list_payment_requests", {"status": "Open"})),
    ]


def cancel_payment_request(both: Both):
    link = pay_link(both)
    first = both.mcp("cancel_payment_request", {"id": link["id"]})
    path = f"/api/v1/payment-requests/{link['id']}"
    return [
        (both.get(path), first),
        (both.post(f"{path}/cancel"), both.mcp("cancel_payment_request", {"id": link["id"]})),
    ]


SEPOLIA_USDC = {
    "network": "Sepolia",
    "currency": "USDC",
    "receiverAddress": ADDRESSES["Sepolia"],
    "amountSats": 5_000_000,
}


def in_test_mode(both: Both) -> Both:
    """The same account through a test key (pdk_test_...)."""
    user = ApiKey.objects.get(prefix=both.key[:PREFIX_LENGTH]).user
    key = api_key_create(user=user, name="test", scopes=list(ALL_SCOPES), livemode=False).key
    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return Both(both.url, key, rest)


def helper_parity(name: str, path: str, **arguments: Any) -> Callable[[Both], list]:
    """A live key's refusal is the same problem; a test draft changed through MCP answers what
    REST then reads, and a repeat answers the same through both."""

    def check(both: Both):
        live = both.draft(SEPOLIA_USDC)
        pairs = [(both.post(path.format(id=live["id"]), arguments), both.mcp(name, {"id": live["id"], **arguments}))]
        test = in_test_mode(both)
        draft = test.draft(SEPOLIA_USDC | {"amountSats": 6_000_000})
        first = test.mcp(name, {"id": draft["id"], **arguments})
        assert "type" not in first, first
        pairs.append((test.get(f"/api/v1/drafts/{draft['id']}"), first))
        pairs.append(
            (test.post(path.format(id=draft["id"]), arguments), test.mcp(name, {"id": draft["id"], **arguments}))
        )
        return pairs

    return check


def paid_then(name: str, path: str) -> Callable[[Both], list]:
    """For a reorg: a test draft paid with 0 confirmations (Seen) first."""

    def check(both: Both):
        test = in_test_mode(both)
        draft = test.draft(SEPOLIA_USDC | {"amountSats": 7_000_000})
        test.post(f"/api/v1/test-helpers/drafts/{draft['id']}/pay", {"confirmations": 0})
        first = test.mcp(name, {"id": draft["id"]})
        assert first["status"] == "Pending", first
        pairs = [(test.get(f"/api/v1/drafts/{draft['id']}"), first)]
        pairs.append((test.post(path.format(id=draft["id"])), test.mcp(name, {"id": draft["id"]})))
        return pairs

    return check


PARITY: dict[str, Callable[[Both], list]] = {
    "create_payment_request": create_payment_request,
    "get_payment_request": get_payment_request,
    "list_payment_requests": list_payment_requests,
    "cancel_payment_request": cancel_payment_request,
    "quote_fee": quote_fee,
    "create_draft": create_draft,
    "create_drafts_batch": create_drafts_batch,
    "get_draft": by_id("get_draft", "/api/v1/drafts/{id}"),
    "list_drafts": list_drafts,
    "get_draft_status": by_id("get_draft_status", "/api/v1/drafts/{id}/status"),
    "cancel_draft": state_change("cancel_draft", "/api/v1/drafts/{id}/cancel"),
    "accept_received": state_change("accept_received", "/api/v1/drafts/{id}/accept-received"),
    "requote_draft": state_change("requote_draft", "/api/v1/drafts/{id}/requote"),
    "get_tx_template": by_id("get_tx_template", "/api/v1/drafts/{id}/tx-template", TESTNET_BTC),
    "get_draft_fees": by_id("get_draft_fees", "/api/v1/drafts/{id}/fees"),
    "get_rates": plain("get_rates", "/api/v1/rates", ccy="SEK"),
    "get_fee_schedule": plain("get_fee_schedule", "/api/v1/fees/schedule"),
    "get_accrued_fees": plain("get_accrued_fees", "/api/v1/fees/accrued"),
    "settle_accrued_fees": settle_accrued_fees,
    "list_webhooks": plain("list_webhooks", "/api/v1/webhooks", pageSize=5),
    "test_pay_draft": helper_parity("test_pay_draft", "/api/v1/test-helpers/drafts/{id}/pay", outcome="split"),
    "test_expire_draft": helper_parity("test_expire_draft", "/api/v1/test-helpers/drafts/{id}/expire"),
    "test_reorg_draft": paid_then("test_reorg_draft", "/api/v1/test-helpers/drafts/{id}/reorg"),
}


def test_every_tool_has_a_parity_check():
    assert set(PARITY) == {tool.name for tool in TOOLS}


@pytest.mark.parametrize("name", sorted(PARITY))
def test_the_same_input_through_rest_and_mcp_gives_the_same_body(name, mcp_url, make_key):
    key = make_key()
    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    for rest_body, mcp_body in PARITY[name](Both(mcp_url, key, rest)):
        assert mcp_body == rest_body

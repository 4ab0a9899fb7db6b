"""For every MCP tool, the same input through REST and through MCP gives the same body
(success bodies and problem documents alike): one implementation behind both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiKey
from accounts.scopes import ALL_SCOPES
from accounts.services import PREFIX_LENGTH, api_key_create
from mcp_server.tools import TOOLS
from tests.drafts.conftest import ADDRESSES
from tests.drafts.test_receiving_wallets import WPKH as RECEIVING_WPKH
from tests.mcp.parity_support import (
    BASE_USDC,
    Both,
    attach_transfer,
    create_webhook,
    enable_webhook,
    get_event,
    list_events,
    list_webhook_deliveries,
    listing,
    redeliver_event,
    redeliver_webhook_delivery,
    rotate_webhook_secret,
    webhook,
    webhook_test,
    without,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CUSTOMER_TESTNET = "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7"
TESTNET_BTC = {"network": "Testnet", "currency": "BTC", "receiverAddress": ADDRESSES["Testnet"], "amountSats": 150_000}


def create_draft(both: Both):
    mcp = both.mcp("create_draft", BASE_USDC | {"idempotencyKey": "parity-1"})
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
        (both.page("/api/v1/drafts", pageSize=1), both.mcp("list_drafts", {"pageSize": 1})),
        (both.page("/api/v1/drafts", **query), both.mcp("list_drafts", query)),
        (both.page("/api/v1/drafts", status="Nope"), both.mcp("list_drafts", {"status": "Nope"})),
    ]


def plain(name: str, path: str, **query) -> Callable[[Both], list]:
    return lambda both: [(both.get(path, **query), both.mcp(name, query))]


def rates(both: Both):
    def unaged(body: dict) -> dict:  # ageSeconds counts whole seconds at the time of each call
        return body | {"rates": [rate | {"ageSeconds": None} for rate in body["rates"]]}

    return [(unaged(both.get("/api/v1/rates", ccy="SEK")), unaged(both.mcp("get_rates", {"ccy": "SEK"})))]


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
    mcp = both.mcp("create_payment_request", PAY_LINK | {"idempotencyKey": "link-1"})
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
        (both.page("/api/v1/payment-requests", pageSize=1), both.mcp("list_payment_requests", {"pageSize": 1})),
        (both.page("/api/v1/payment-requests", status="Open"), both.mcp("list_payment_requests", {"status": "Open"})),
    ]


def cancel_payment_request(both: Both):
    link = pay_link(both)
    first = both.mcp("cancel_payment_request", {"id": link["id"]})
    path = f"/api/v1/payment-requests/{link['id']}"
    return [
        (both.get(path), first),
        (both.post(f"{path}/cancel"), both.mcp("cancel_payment_request", {"id": link["id"]})),
    ]


PAID = iter(range(150_000, 160_000))  # each paid draft its own amount: a paid amount stays held


def paid_draft(both: Both) -> dict:
    """A Confirmed draft (paid through the watchers' door) to refund."""
    from drafts.models import Draft
    from tests.refunds.conftest import pay

    draft = both.draft(TESTNET_BTC | {"amountSats": next(PAID)})
    return {"id": str(pay(Draft.objects.get(pk=draft["id"])).id)}


def issued_refund(both: Both, **body) -> dict:
    response = both.rest.post(
        "/api/v1/refunds", {"draftId": paid_draft(both)["id"], "full": True, **body}, format="json"
    )
    assert response.status_code == 201, response.json()
    return response.json()


def approve_refund(both: Both):
    from refunds.services import refund_claim

    refund = issued_refund(both)
    path = f"/api/v1/refunds/{refund['id']}"
    early = [(both.post(path + "/approve"), both.mcp("approve_refund", {"id": refund["id"]}))]  # not claimed: 409
    # The customer's own address (the merchant's, where the paid amount stays held, is refused).
    refund_claim(token=refund["claimUrl"].rsplit("/", 1)[1], refund_address=CUSTOMER_TESTNET)
    approved = both.mcp("approve_refund", {"id": refund["id"]})
    return [*early, (both.get(path), approved)]


def create_refund(both: Both):
    first = both.mcp("create_refund", {"draftId": paid_draft(both)["id"], "full": True})
    unknown = {"draftId": "00000000-0000-0000-0000-000000000000", "full": True}
    return [
        (both.get(f"/api/v1/refunds/{first['id']}"), first),
        (both.post("/api/v1/refunds", unknown), both.mcp("create_refund", unknown)),  # 404 naming draftId
    ]


def get_refund(both: Both):
    refund = issued_refund(both)
    missing = "00000000-0000-0000-0000-000000000000"
    return [
        (both.get(f"/api/v1/refunds/{refund['id']}"), both.mcp("get_refund", {"id": refund["id"]})),
        (both.get(f"/api/v1/refunds/{missing}"), both.mcp("get_refund", {"id": missing})),
    ]


def list_refunds(both: Both):
    issued_refund(both)
    issued_refund(both)
    return [
        (both.page("/api/v1/refunds", pageSize=1, page=2), both.mcp("list_refunds", {"pageSize": 1, "page": 2})),
        (both.page("/api/v1/refunds", status="Nowhere"), both.mcp("list_refunds", {"status": "Nowhere"})),
    ]


def cancel_refund(both: Both):
    refund = issued_refund(both)
    path = f"/api/v1/refunds/{refund['id']}"
    first = both.mcp("cancel_refund", {"id": refund["id"]})
    return [(both.get(path), first), (both.post(f"{path}/cancel"), both.mcp("cancel_refund", {"id": refund["id"]}))]


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
        # A repeat may change the draft again (a second payment is noted on it: draft.paid_again),
        # so the two answers agree on everything but the moment of the change.
        again = test.post(path.format(id=draft["id"]), arguments), test.mcp(name, {"id": draft["id"], **arguments})
        pairs.append(tuple({k: v for k, v in body.items() if k != "updatedAt"} for body in again))
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


TEMPLATE = {"interval": "Weekly", "name": "rent", "timezone": "Europe/Stockholm", "draft": BASE_USDC}
TEMPLATE_FRESH = ("id", "createdAt", "firstRunAt", "nextRunAt")


def template(both: Both) -> dict:
    response = both.rest.post("/api/v1/recurring-templates", TEMPLATE, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def create_recurring_template(both: Both):
    bad = TEMPLATE | {"interval": "Hourly"}
    path = "/api/v1/recurring-templates"
    return [
        (
            without(both.post(path, TEMPLATE), *TEMPLATE_FRESH),
            without(both.mcp("create_recurring_template", TEMPLATE), *TEMPLATE_FRESH),
        ),
        (both.post(path, bad), both.mcp("create_recurring_template", bad)),
    ]


def template_change(name: str, action: str) -> Callable[[Both], list]:
    def check(both: Both):
        made = template(both)
        first = both.mcp(name, {"id": made["id"]})
        path = f"/api/v1/recurring-templates/{made['id']}"
        return [(both.get(path), first), (both.post(f"{path}/{action}"), both.mcp(name, {"id": made["id"]}))]

    return check


def deleted_twice(name: str, path: str, make: Callable[[Both], dict]) -> Callable[[Both], list]:
    """Deleting answers what REST read just before; a second delete is the same 404 on both."""

    def check(both: Both):
        made = make(both)
        before = both.get(path.format(id=made["id"]))
        first = both.mcp(name, {"id": made["id"]})
        again = both.rest.delete(path.format(id=made["id"])).json()
        return [(before, first), (again, both.mcp(name, {"id": made["id"]}))]

    return check


ENTRY = {"network": "Base", "address": ADDRESSES["Base"], "direction": "Receiving", "label": "shop"}


def entry(both: Both) -> dict:
    response = both.rest.post("/api/v1/address-book", ENTRY, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def add_address(both: Both):
    first = both.mcp("add_address", ENTRY)
    return [
        (both.get(f"/api/v1/address-book/{first['id']}"), first),
        (both.post("/api/v1/address-book", ENTRY), both.mcp("add_address", ENTRY)),  # 409 duplicate on both
    ]


def list_address_book(both: Both):
    entry(both)
    query = {"network": "Base", "direction": "Receiving", "pageSize": 1}
    return [
        (both.page("/api/v1/address-book", **query), both.mcp("list_address_book", query)),
        (both.page("/api/v1/address-book", network="Nowhere"), both.mcp("list_address_book", {"network": "Nowhere"})),
    ]


def list_recurring_templates(both: Both):
    template(both)
    template(both)
    return [
        (
            both.page("/api/v1/recurring-templates", pageSize=1, page=2),
            both.mcp("list_recurring_templates", {"pageSize": 1, "page": 2}),
        )
    ]


WALLET = {"network": "Testnet", "descriptor": RECEIVING_WPKH}


def create_receiving_wallet(both: Both):
    first = both.mcp("create_receiving_wallet", WALLET)
    return [
        (both.get(f"/api/v1/receiving-wallets/{first['id']}"), first),
        (both.post("/api/v1/receiving-wallets", WALLET), both.mcp("create_receiving_wallet", WALLET)),  # 409 both
        (both.post("/api/v1/receiving-wallets", {}), both.mcp("create_receiving_wallet", {})),  # 400 both
    ]


def receiving_wallet_reads(both: Both):
    made = both.mcp("create_receiving_wallet", WALLET)
    return [
        (both.get(f"/api/v1/receiving-wallets/{made['id']}"), both.mcp("get_receiving_wallet", {"id": made["id"]})),
        (both.page("/api/v1/receiving-wallets", pageSize=1), both.mcp("list_receiving_wallets", {"pageSize": 1})),
    ]


PARITY: dict[str, Callable[[Both], list]] = {
    "create_receiving_wallet": create_receiving_wallet,
    "get_receiving_wallet": receiving_wallet_reads,
    "list_receiving_wallets": receiving_wallet_reads,
    "list_webhook_deliveries": list_webhook_deliveries,
    "redeliver_webhook_delivery": redeliver_webhook_delivery,
    "rotate_webhook_secret": rotate_webhook_secret,
    "enable_webhook": enable_webhook,
    "list_unmatched_transfers": lambda both: [
        (both.page("/api/v1/transfers", matched="false"), both.mcp("list_unmatched_transfers", {"matched": False})),
        (both.page("/api/v1/transfers", matched="maybe"), both.mcp("list_unmatched_transfers", {"matched": "maybe"})),
    ],
    "attach_transfer": attach_transfer,
    "list_events": list_events,
    "get_event": get_event,
    "redeliver_event": redeliver_event,
    "create_webhook": create_webhook,
    "delete_webhook": deleted_twice("delete_webhook", "/api/v1/webhooks/{id}", webhook),
    "test_webhook": webhook_test,
    "create_recurring_template": create_recurring_template,
    "list_recurring_templates": list_recurring_templates,
    "pause_recurring_template": template_change("pause_recurring_template", "pause"),
    "resume_recurring_template": template_change("resume_recurring_template", "resume"),
    "delete_recurring_template": deleted_twice(
        "delete_recurring_template", "/api/v1/recurring-templates/{id}", template
    ),
    "add_address": add_address,
    "list_address_book": list_address_book,
    "delete_address": deleted_twice("delete_address", "/api/v1/address-book/{id}", entry),
    "create_refund": create_refund,
    "get_refund": get_refund,
    "list_refunds": list_refunds,
    "approve_refund": approve_refund,
    "cancel_refund": cancel_refund,
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
    "get_rates": rates,
    "get_fee_schedule": plain("get_fee_schedule", "/api/v1/fees/schedule"),
    "get_attention": plain("get_attention", "/api/v1/attention"),
    "get_accrued_fees": plain("get_accrued_fees", "/api/v1/fees/accrued"),
    "settle_accrued_fees": settle_accrued_fees,
    "list_webhooks": listing("list_webhooks", "/api/v1/webhooks", pageSize=5),
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
    for i, (rest_body, mcp_body) in enumerate(PARITY[name](Both(mcp_url, key, rest))):
        assert mcp_body == rest_body, i

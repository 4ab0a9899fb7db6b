"""What tests/mcp/test_parity.py runs: the same input through REST and MCP (`Both`), and the
checks of the webhook and transfer tools."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.test import override_settings
from rest_framework.test import APIClient

from tests.drafts.conftest import ADDRESSES
from tests.mcp.conftest import call_tool

BASE_USDC = {
    "network": "Base",
    "currency": "USDC",
    "receiverAddress": ADDRESSES["Base"],
    "fiatCurrency": "EUR",
    "fiatAmount": 25,
}


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

    def page(self, path: str, arguments: dict[str, Any] | None = None, **query) -> Any:
        """A REST list as an MCP list tool gives it: {items, total, next}, `next` the tool's
        arguments for the next page: REST's cursor as startingAfter ({items, page, pageSize,
        total, next}, or a plain array with X-Total-Count and X-Next-Cursor); a problem document
        as it is."""
        response = self.rest.get(path, query)
        body = response.json()
        if response.status_code >= 400:
            return body
        if isinstance(body, list):
            items, total, after = body, int(response["X-Total-Count"]), response.headers.get("X-Next-Cursor")
        else:
            items, total, after = body["items"], body["total"], body["next"]
        arguments = dict(query) if arguments is None else arguments
        following = {**{k: v for k, v in arguments.items() if k != "page"}, "startingAfter": after} if after else None
        return {"items": items, "total": total, "next": following}

    def post(self, path: str, body: Any = None, **headers) -> Any:
        return self.rest.post(path, body, format="json", **headers).json()

    def draft(self, body: dict = BASE_USDC) -> dict:
        response = self.rest.post("/api/v1/drafts", body, format="json")
        assert response.status_code == 201, response.json()
        return response.json()


def without(body: dict, *keys: str) -> dict:
    """A body without what differs between two creations (ids, secrets, times)."""
    return {k: v for k, v in body.items() if k not in keys}


HOOK = {"url": "https://hooks.example.com/payments", "events": ["draft.confirmed", "draft.seen"]}


def webhook(both: Both) -> dict:
    """An endpoint registered through REST (on this machine: no DNS here) for the tools to act on."""
    with override_settings(OUTBOUND_ALLOW_LOOPBACK=True):
        response = both.rest.post("/api/v1/webhooks", HOOK | {"url": "http://127.0.0.1:9/hooks"}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def create_webhook(both: Both):
    fresh = ("id", "secret", "createdAt")
    bad = {"url": "http://hooks.example.com/x"}
    return [
        (without(both.post("/api/v1/webhooks", HOOK), *fresh), without(both.mcp("create_webhook", HOOK), *fresh)),
        (both.post("/api/v1/webhooks", bad), both.mcp("create_webhook", bad)),
    ]


def webhook_test(both: Both):
    hook = webhook(both)
    path = f"/api/v1/webhooks/{hook['id']}"
    fresh = ("id", "eventId", "createdAt", "nextAttemptAt", "status", "attempts", "deliveredAt", "attemptLog")
    pairs = [
        (without(both.post(f"{path}/test"), *fresh), without(both.mcp("test_webhook", {"id": hook["id"]}), *fresh))
    ]
    both.rest.patch(path, {"active": False}, format="json")
    pairs.append((both.post(f"{path}/test"), both.mcp("test_webhook", {"id": hook["id"]})))  # 409 on both
    return pairs


def listing(name: str, path: str, **query) -> Callable[[Both], list]:
    return lambda both: [(both.page(path, **query), both.mcp(name, query))]


DELIVERY_FRESH = ("nextAttemptAt", "status", "attempts", "deliveredAt", "attemptLog")


def delivered(both: Both) -> tuple[dict, dict]:
    """An endpoint and one delivery to it (a test event)."""
    hook = webhook(both)
    return hook, both.post(f"/api/v1/webhooks/{hook['id']}/test")


def list_webhook_deliveries(both: Both):
    hook, _ = delivered(both)
    path = f"/api/v1/webhooks/{hook['id']}/deliveries"
    pairs = []
    for query in ({}, {"status": "Succeeded"}, {"status": "Nope"}, {"colour": "red"}):
        arguments = {"id": hook["id"], **query}
        rest, mcp = both.page(path, arguments, **query), both.mcp("list_webhook_deliveries", arguments)
        if "items" in rest:  # attempts go on meanwhile: the same deliveries, in the same order
            rest["items"] = [without(item, *DELIVERY_FRESH) for item in rest["items"]]
            mcp["items"] = [without(item, *DELIVERY_FRESH) for item in mcp["items"]]
        pairs.append((rest, mcp))
    return pairs


def redeliver_webhook_delivery(both: Both):
    hook, delivery = delivered(both)
    path = f"/api/v1/webhooks/{hook['id']}/deliveries/{delivery['id']}/redeliver"
    first = both.mcp("redeliver_webhook_delivery", {"id": hook["id"], "deliveryId": delivery["id"]})
    missing = "00000000-0000-0000-0000-000000000000"
    return [
        (without(both.post(path), *DELIVERY_FRESH), without(first, *DELIVERY_FRESH)),
        (
            both.post(f"/api/v1/webhooks/{hook['id']}/deliveries/{missing}/redeliver"),
            both.mcp("redeliver_webhook_delivery", {"id": hook["id"], "deliveryId": missing}),
        ),
    ]


def rotate_webhook_secret(both: Both):
    hook = webhook(both)
    path = f"/api/v1/webhooks/{hook['id']}/rotate-secret"
    fresh = ("secret", "previousSecretExpiresAt")
    first = both.mcp("rotate_webhook_secret", {"id": hook["id"], "overlapHours": 0})
    assert first["secret"].startswith("whsec_") and first["secret"] != hook["secret"]
    return [
        (without(both.post(path, {"overlapHours": 0}), *fresh), without(first, *fresh)),
        (
            both.post(path, {"overlapHours": -1}),
            both.mcp("rotate_webhook_secret", {"id": hook["id"], "overlapHours": -1}),
        ),
    ]


def enable_webhook(both: Both):
    """Re-enabling checks the URL again: this one (on this machine) is refused alike by both;
    tests/mcp/test_account_tools.py re-enables one with a server that allows it."""
    hook = webhook(both)
    path = f"/api/v1/webhooks/{hook['id']}"
    both.rest.patch(path, {"active": False}, format="json")
    refused = both.rest.patch(path, {"active": True}, format="json").json()
    return [(refused, both.mcp("enable_webhook", {"id": hook["id"]}))]


def attach_transfer(both: Both):
    draft = both.draft()
    missing = "00000000-0000-0000-0000-000000000000"
    path = f"/api/v1/transfers/{missing}/attach"
    return [
        (
            both.post(path, {"draftId": draft["id"]}),
            both.mcp("attach_transfer", {"id": missing, "draftId": draft["id"]}),
        ),
        (both.post(path, {}), both.mcp("attach_transfer", {"id": missing})),
    ]


MISSING = "00000000-0000-0000-0000-000000000000"


def list_events(both: Both):
    draft = both.draft()
    both.draft()
    query = {"pageSize": 1, "page": 2, "type": "draft.created"}
    return [
        (both.page("/api/v1/events", **query), both.mcp("list_events", query)),
        (both.page("/api/v1/events", objectId=draft["id"]), both.mcp("list_events", {"objectId": draft["id"]})),
        (both.page("/api/v1/events", type="draft.nope"), both.mcp("list_events", {"type": "draft.nope"})),
        (both.page("/api/v1/events", colour="red"), both.mcp("list_events", {"colour": "red"})),
    ]


def get_event(both: Both):
    both.draft()
    event = both.page("/api/v1/events", pageSize=1)["items"][0]
    return [
        (both.get(f"/api/v1/events/{event['id']}"), both.mcp("get_event", {"id": event["id"]})),
        (both.get(f"/api/v1/events/{MISSING}"), both.mcp("get_event", {"id": MISSING})),
    ]


def redeliver_event(both: Both):
    """Sent again to the endpoint that had it: the same deliveries (but for their fresh state)."""
    webhook(both)
    both.draft()
    event = both.page("/api/v1/events", pageSize=1, type="draft.created")["items"][0]
    path = f"/api/v1/events/{event['id']}/redeliver"

    def unfresh(body: dict) -> dict:
        if "deliveries" not in body:
            return body
        return body | {"deliveries": [without(d, *DELIVERY_FRESH) for d in body["deliveries"]]}

    first = both.mcp("redeliver_event", {"id": event["id"]})
    return [
        (unfresh(both.post(path)), unfresh(first)),
        (
            both.post(path, {"webhookId": MISSING}),
            both.mcp("redeliver_event", {"id": event["id"], "webhookId": MISSING}),
        ),
        (both.post(f"/api/v1/events/{MISSING}/redeliver"), both.mcp("redeliver_event", {"id": MISSING})),
    ]

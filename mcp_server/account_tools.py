"""The MCP tools for the account's own setup: webhook endpoints, recurring templates and the
address book. Each is one REST operation, run through the same edge function as its view."""

from __future__ import annotations

from addressbook.api.edge import address_book_create_outcome, address_book_delete_json, address_book_page_json
from mcp_server.spec import Call, ToolSpec, once
from recurring import services as recurring_services
from recurring.api.edge import (
    recurring_template_create_outcome,
    recurring_template_delete_json,
    recurring_template_page_json,
)
from recurring.presenters import recurring_template_json
from recurring.selectors import recurring_template_get
from wallets.api.edge import receiving_wallet_create_outcome, receiving_wallet_get_json, receiving_wallet_page_json
from webhooks.api.edge import (
    delivery_page_json,
    delivery_redeliver_json,
    event_json,
    event_page_json,
    event_redeliver_json,
    webhook_create_outcome,
    webhook_delete_json,
    webhook_rotate_secret_json,
    webhook_test_json,
    webhook_update_json,
)


def query_of(call: Call) -> dict:
    """The arguments without the path's id: the operation's query or body."""
    return {name: value for name, value in call.arguments.items() if name != "id"}


def recurring_template_of(call: Call):
    return recurring_template_get(user=call.user, template_id=call.arguments["id"])


WEBHOOK_ID = {"id": "Webhook endpoint id."}
TEMPLATE_ID = {"id": "Recurring template id."}
ENTRY_ID = {"id": "Address-book entry id."}
EVENT_ID = {"id": "The event's id."}
WALLET_ID = {"id": "The receiving wallet's id."}
WALLET_INPUT = {
    "descriptor": "Public descriptor wpkh/tr/sh(wpkh) ending /0/* or /<0;1>/*, or an xpub/ypub/zpub (tpub/upub/vpub).",
    "scriptType": "For a bare xpub/tpub.",
    "label": "Your name for it.",
}

ACCOUNT_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="create_webhook",
        method="POST",
        path="/api/v1/webhooks",
        run=once(webhook_create_outcome),
        guidance=(
            "Keep the result's secret: it signs every delivery (Standard Webhooks, see /llms.txt) and is shown "
            "only this once. events omitted: all."
        ),
        read_only=False,
        open_world=True,  # the URL is an outside server
    ),
    ToolSpec(
        name="delete_webhook",
        method="DELETE",
        path="/api/v1/webhooks/{id}",
        run=lambda c: webhook_delete_json(user=c.user, webhook_id=c.arguments["id"]),
        guidance="Stops every delivery to the endpoint; answers with the deleted endpoint.",
        read_only=False,
        destructive=True,
        idempotent=True,
        descriptions=WEBHOOK_ID,
    ),
    ToolSpec(
        name="test_webhook",
        method="POST",
        path="/api/v1/webhooks/{id}/test",
        run=lambda c: webhook_test_json(user=c.user, webhook_id=c.arguments["id"]),
        guidance="Sends a signed `test` event to the endpoint now; the result is the delivery (status, attempts).",
        read_only=False,
        open_world=True,
        descriptions=WEBHOOK_ID,
    ),
    ToolSpec(
        name="list_webhook_deliveries",
        method="GET",
        path="/api/v1/webhooks/{id}/deliveries",
        run=lambda c: delivery_page_json(user=c.user, webhook_id=c.arguments["id"], query=query_of(c)),
        guidance="Newest first, each with its attempts (HTTP status, duration, error); filter by status.",
        items_as="test_webhook",
        read_only=True,
        idempotent=True,
        descriptions=WEBHOOK_ID,
    ),
    ToolSpec(
        name="redeliver_webhook_delivery",
        method="POST",
        path="/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver",
        run=lambda c: delivery_redeliver_json(
            user=c.user, webhook_id=c.arguments["id"], delivery_id=c.arguments["deliveryId"]
        ),
        guidance=("Sends it again (same webhook-id) with a fresh round of attempts."),
        read_only=False,
        open_world=True,
        descriptions=WEBHOOK_ID | {"deliveryId": "The delivery's id (list_webhook_deliveries)."},
        same_result_as="test_webhook",
    ),
    ToolSpec(
        name="rotate_webhook_secret",
        method="POST",
        path="/api/v1/webhooks/{id}/rotate-secret",
        run=lambda c: webhook_rotate_secret_json(user=c.user, webhook_id=c.arguments["id"], body=query_of(c)),
        guidance=("The new secret is shown only here; the old one also signs for overlapHours (default 24; 0: none)."),
        read_only=False,
        destructive=True,
        descriptions=WEBHOOK_ID,
        same_result_as="create_webhook",
    ),
    ToolSpec(
        name="enable_webhook",
        method="PATCH",
        path="/api/v1/webhooks/{id}",
        run=lambda c: webhook_update_json(user=c.user, webhook_id=c.arguments["id"], body={"active": True}),
        guidance=("Off by hand or after failures; redeliver_webhook_delivery sends what it missed."),
        summary="Re-enable a webhook endpoint",
        read_only=False,
        idempotent=True,
        descriptions=WEBHOOK_ID,
        only=("id",),
        same_result_as="delete_webhook",
    ),
    ToolSpec(
        name="list_events",
        method="GET",
        path="/api/v1/events",
        run=lambda c: event_page_json(user=c.user, query=c.arguments),
        guidance="Newest first, in the key's mode.",
        summary="List events",
        items_as="get_event",
        descriptions={"type": "Only events of this type."},
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="get_event",
        method="GET",
        path="/api/v1/events/{id}",
        run=lambda c: event_json(user=c.user, event_id=c.arguments["id"]),
        guidance="As its webhooks carry it.",
        read_only=True,
        idempotent=True,
        descriptions=EVENT_ID,
    ),
    ToolSpec(
        name="redeliver_event",
        method="POST",
        path="/api/v1/events/{id}/redeliver",
        run=lambda c: event_redeliver_json(user=c.user, event_id=c.arguments["id"], body=query_of(c)),
        guidance="To every endpoint that had it, or to webhookId only.",
        summary="Redeliver an event",
        read_only=False,
        open_world=True,
        descriptions=EVENT_ID,
        result_items_as={"deliveries": "test_webhook"},
    ),
    ToolSpec(
        name="create_recurring_template",
        method="POST",
        path="/api/v1/recurring-templates",
        run=once(recurring_template_create_outcome),
        guidance=("Every interval from firstRunAt (default now) in timezone (IANA, default UTC)."),
        nested_as={"draft": "create_draft"},
        read_only=False,
    ),
    ToolSpec(
        name="list_recurring_templates",
        method="GET",
        path="/api/v1/recurring-templates",
        run=lambda c: recurring_template_page_json(user=c.user, query=c.arguments),
        guidance="Newest first; each with its interval, nextRunAt and draft.",
        items_as="create_recurring_template",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="pause_recurring_template",
        method="POST",
        path="/api/v1/recurring-templates/{id}/pause",
        run=lambda c: recurring_template_json(
            recurring_services.recurring_template_pause(template=recurring_template_of(c))
        ),
        same_result_as="create_recurring_template",
        guidance="No runs until resume_recurring_template.",
        read_only=False,
        idempotent=True,
        descriptions=TEMPLATE_ID,
    ),
    ToolSpec(
        name="resume_recurring_template",
        method="POST",
        path="/api/v1/recurring-templates/{id}/resume",
        run=lambda c: recurring_template_json(
            recurring_services.recurring_template_resume(template=recurring_template_of(c))
        ),
        same_result_as="create_recurring_template",
        guidance="Runs again from the next run time; the paused period is not made up.",
        read_only=False,
        idempotent=True,
        descriptions=TEMPLATE_ID,
    ),
    ToolSpec(
        name="delete_recurring_template",
        method="DELETE",
        path="/api/v1/recurring-templates/{id}",
        run=lambda c: recurring_template_delete_json(user=c.user, template_id=c.arguments["id"]),
        guidance=("No more runs; the drafts it made stay."),
        read_only=False,
        destructive=True,
        idempotent=True,
        descriptions=TEMPLATE_ID,
        same_result_as="create_recurring_template",
    ),
    ToolSpec(
        name="add_address",
        method="POST",
        path="/api/v1/address-book",
        run=once(address_book_create_outcome),
        guidance=("A Receiving entry can be create_draft's addressBookId in place of receiverAddress."),
        read_only=False,
    ),
    ToolSpec(
        name="list_address_book",
        method="GET",
        path="/api/v1/address-book",
        run=lambda c: address_book_page_json(user=c.user, query=c.arguments),
        guidance="Newest first; filter by network and direction.",
        items_as="add_address",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="delete_address",
        method="DELETE",
        path="/api/v1/address-book/{id}",
        run=lambda c: address_book_delete_json(user=c.user, entry_id=c.arguments["id"]),
        guidance=("Drafts made with it keep their address."),
        same_result_as="add_address",
        read_only=False,
        destructive=True,
        idempotent=True,
        descriptions=ENTRY_ID,
    ),
    ToolSpec(
        name="create_receiving_wallet",
        method="POST",
        path="/api/v1/receiving-wallets",
        run=once(receiving_wallet_create_outcome),
        guidance="Public keys only. Then create_draft with receivingWalletId: a new address each.",
        summary="Register a receiving wallet",
        descriptions=WALLET_INPUT,
        read_only=False,
    ),
    ToolSpec(
        name="list_receiving_wallets",
        method="GET",
        path="/api/v1/receiving-wallets",
        run=lambda c: receiving_wallet_page_json(user=c.user, query=c.arguments),
        guidance="Newest first.",
        items_as="create_receiving_wallet",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="get_receiving_wallet",
        method="GET",
        path="/api/v1/receiving-wallets/{id}",
        run=lambda c: receiving_wallet_get_json(user=c.user, wallet_id=c.arguments["id"]),
        guidance="",
        same_result_as="create_receiving_wallet",
        read_only=True,
        idempotent=True,
        descriptions=WALLET_ID,
    ),
)

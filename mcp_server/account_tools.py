"""The MCP tools for the account's own setup: webhook endpoints, recurring templates and the
address book. Each is one REST operation, run through the same edge function as its view."""

from __future__ import annotations

from addressbook.api.edge import address_book_create_json, address_book_delete_json, address_book_page_json
from mcp_server.spec import Call, ToolSpec
from recurring import services as recurring_services
from recurring.api.edge import (
    recurring_template_create_json,
    recurring_template_delete_json,
    recurring_template_page_json,
)
from recurring.presenters import recurring_template_json
from recurring.selectors import recurring_template_get
from webhooks.api.edge import webhook_create_json, webhook_delete_json, webhook_test_json


def recurring_template_of(call: Call):
    return recurring_template_get(user=call.user, template_id=call.arguments["id"])


WEBHOOK_ID = {"id": "The webhook endpoint's id (a UUID), as returned by create_webhook or list_webhooks."}
TEMPLATE_ID = {"id": "The recurring template's id (a UUID), as returned by create_recurring_template."}
ENTRY_ID = {"id": "The address-book entry's id (a UUID), as returned by add_address or list_address_book."}

ACCOUNT_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="create_webhook",
        method="POST",
        path="/api/v1/webhooks",
        run=lambda c: webhook_create_json(user=c.user, body=c.arguments),
        guidance=(
            "Give an HTTPS url and optionally the events to send (omitted: all). Keep the result's secret: it signs "
            "every delivery (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature headers; see "
            "/llms.txt) and is shown only this once."
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
        name="create_recurring_template",
        method="POST",
        path="/api/v1/recurring-templates",
        run=lambda c: recurring_template_create_json(user=c.user, body=c.arguments),
        guidance=(
            "Makes a draft every day, week or month (interval) from draft (a create_draft input), starting at "
            "firstRunAt (default: now) in timezone (IANA, default UTC). Each draft's events reach the webhooks."
        ),
        read_only=False,
    ),
    ToolSpec(
        name="list_recurring_templates",
        method="GET",
        path="/api/v1/recurring-templates",
        run=lambda c: recurring_template_page_json(user=c.user, query=c.arguments),
        guidance="Newest first, paged {items, page, pageSize, total}; each with its interval, nextRunAt and draft.",
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
        guidance="No more runs; the drafts it made stay. Answers with the deleted template.",
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
        run=lambda c: address_book_create_json(user=c.user, body=c.arguments),
        guidance=(
            "Names an address on a network (checked with its rules). A Receiving entry can be given to "
            "create_draft as addressBookId instead of receiverAddress."
        ),
        read_only=False,
    ),
    ToolSpec(
        name="list_address_book",
        method="GET",
        path="/api/v1/address-book",
        run=lambda c: address_book_page_json(user=c.user, query=c.arguments),
        guidance="Newest first, paged; filter by network and direction.",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="delete_address",
        method="DELETE",
        path="/api/v1/address-book/{id}",
        run=lambda c: address_book_delete_json(user=c.user, entry_id=c.arguments["id"]),
        guidance="Removes the entry (drafts made with it keep their address); answers with the removed entry.",
        read_only=False,
        destructive=True,
        idempotent=True,
        descriptions=ENTRY_ID,
    ),
)

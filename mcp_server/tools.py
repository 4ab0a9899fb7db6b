"""The MCP tools: each is one REST operation, run through the same edge and service functions.

A tool names the REST operation it mirrors (method and path). Its scope, summary and
input and output schemas come from that operation's OpenAPI description, and its body
calls what the REST view calls, so the JSON a tool returns is the REST body.
"""

from __future__ import annotations

import functools
from typing import Any

from mcp_types import Tool

from attention.api.edge import attention_body
from chainwatch.api.edge import transfer_attach_json, transfer_page_json
from core.api.pagination import Page
from drafts import services as draft_services
from drafts.api.creation import create_draft_outcome
from drafts.api.edge import draft_batch_json, draft_page_json, tx_template_json
from drafts.api.test_helpers import simulate_expiry_json, simulate_payment_json, simulate_reorg_json
from drafts.documents import draft_fees_json
from drafts.presenters import draft_json, draft_status_json
from fees.api.edge import fee_quote_json, settlement_outcome
from fees.calculator import fee_schedule
from fees.ledger import balance_of
from mcp_server.account_tools import ACCOUNT_TOOLS
from mcp_server.spec import Call, ProblemBody, ToolSpec, once
from paylinks import services as paylink_services
from paylinks.api.edge import payment_request_create_outcome, payment_request_page
from paylinks.presenters import payment_request_json
from paylinks.selectors import payment_request_get
from payments.api.edge import rates_json
from refunds import services as refund_services
from refunds.api.edge import refund_create_outcome, refund_page_json
from refunds.presenters import refund_json
from refunds.selectors import refund_get
from webhooks.api.edge import webhook_page_json

__all__ = ["BY_NAME", "TOOLS", "Call", "ProblemBody", "ToolSpec", "tool_list"]


def plain_page(page: tuple[list[dict[str, Any]], Page]) -> dict[str, Any]:
    """A list the REST API sends as a plain array (X-Total-Count, X-Next-Cursor), as an envelope."""
    items, listed = page
    return {"items": items, "total": listed.total, "next": listed.next}


def refund_of(call: Call):
    return refund_get(user=call.user, refund_id=call.arguments["id"])


def payment_request_of(call: Call):
    return payment_request_get(user=call.user, payment_request_id=call.arguments["id"])


REFUND_ID = {"id": "Refund id."}
DRAFT_ID = {"id": "Draft id."}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="create_draft",
        method="POST",
        path="/api/v1/drafts",
        run=once(create_draft_outcome),
        guidance=(
            "Network, currency, and amountSats (base units) or fiatCurrency with fiatAmount. The payer pays "
            "paymentUri (Bitcoin MultiOutput: get_tx_template); poll get_draft_status."
        ),
        same_result_as="get_draft",
        read_only=False,
        open_world=True,  # a Lightning address is resolved at its LNURL server
        required_too=("network", "currency"),
    ),
    ToolSpec(
        name="create_drafts_batch",
        method="POST",
        path="/api/v1/drafts/batch",
        run=lambda c: draft_batch_json(user=c.user, body=c.arguments),
        guidance=(
            "Up to 25 items {draft: <create_draft input, no idempotencyKey>, idempotencyKey}; results in "
            "order: {index, draft, error}; a failed item stops no other."
        ),
        nested_as={"draft": "create_draft"},
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        name="get_draft",
        method="GET",
        path="/api/v1/drafts/{id}",
        run=lambda c: draft_json(c.draft),
        guidance="The full draft: amounts, quote, fee, payment URI and status.",
        read_only=True,
        idempotent=True,
        descriptions=DRAFT_ID,
    ),
    ToolSpec(
        name="list_drafts",
        method="GET",
        path="/api/v1/drafts",
        run=lambda c: draft_page_json(user=c.user, query=c.arguments),
        guidance="Newest first; filter by status, network, method, currency, q, from, to.",
        items_as="get_draft",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="get_draft_status",
        method="GET",
        path="/api/v1/drafts/{id}/status",
        run=lambda c: draft_status_json(c.draft),
        guidance=(
            "Poll to watch a payment: Pending, Seen (transfer seen), Confirmed (required confirmations); "
            "or AmountMismatch, Expired, Cancelled."
        ),
        read_only=True,
        idempotent=True,
        descriptions=DRAFT_ID,
    ),
    ToolSpec(
        name="cancel_draft",
        method="POST",
        path="/api/v1/drafts/{id}/cancel",
        run=lambda c: draft_json(draft_services.draft_cancel(draft=c.draft)),
        guidance="Stops watching for the payment; a Confirmed or Expired draft cannot be cancelled.",
        read_only=False,
        destructive=True,
        idempotent=True,
        descriptions=DRAFT_ID,
        same_result_as="get_draft",
    ),
    ToolSpec(
        name="accept_received",
        method="POST",
        path="/api/v1/drafts/{id}/accept-received",
        run=lambda c: draft_json(draft_services.draft_accept_received(draft=c.draft)),
        guidance="Only for a draft in AmountMismatch: the transfer that arrived then pays the draft.",
        read_only=False,
        idempotent=True,
        descriptions=DRAFT_ID,
        same_result_as="get_draft",
    ),
    ToolSpec(
        name="requote_draft",
        method="POST",
        path="/api/v1/drafts/{id}/requote",
        run=lambda c: draft_json(draft_services.draft_requote(draft=c.draft)),
        guidance="Only for a Pending fiat-priced draft whose quote expired: replaces the amount and fee.",
        read_only=False,
        destructive=True,
        descriptions=DRAFT_ID,
        same_result_as="get_draft",
    ),
    ToolSpec(
        name="get_tx_template",
        method="GET",
        path="/api/v1/drafts/{id}/tx-template",
        run=lambda c: tx_template_json(draft=c.draft),
        guidance=("On-chain Bitcoin drafts only; others pay their paymentUri."),
        read_only=True,
        idempotent=True,
        descriptions=DRAFT_ID,
    ),
    ToolSpec(
        name="get_draft_fees",
        method="GET",
        path="/api/v1/drafts/{id}/fees",
        run=lambda c: draft_fees_json(c.draft),
        guidance="The platform fee of a draft and where it goes (an output, accrued or waived).",
        read_only=True,
        idempotent=True,
        descriptions=DRAFT_ID,
    ),
    ToolSpec(
        name="create_payment_request",
        method="POST",
        path="/api/v1/payment-requests",
        run=once(payment_request_create_outcome),
        guidance=(
            "A pay link priced in fiat; options are what the payer may pick from. Share the result's payUrl; the "
            "rate locks when the payer picks."
        ),
        same_result_as="get_payment_request",
        read_only=False,
    ),
    ToolSpec(
        name="get_payment_request",
        method="GET",
        path="/api/v1/payment-requests/{id}",
        run=lambda c: payment_request_json(payment_request_of(c)),
        guidance="Its status (Open, Paid, Expired, Cancelled), options, payUrl and the draft the payer's pick made.",
        read_only=True,
        idempotent=True,
        descriptions={"id": "The payment request's id."},
    ),
    ToolSpec(
        name="list_payment_requests",
        method="GET",
        path="/api/v1/payment-requests",
        run=lambda c: plain_page(payment_request_page(user=c.user, query=c.arguments)),
        guidance="Newest first; filter by status and orderId.",
        items_as="get_payment_request",
        summary="List payment requests",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="cancel_payment_request",
        method="POST",
        path="/api/v1/payment-requests/{id}/cancel",
        run=lambda c: payment_request_json(
            paylink_services.payment_request_cancel(payment_request=payment_request_of(c))
        ),
        same_result_as="get_payment_request",
        guidance="Closes an Open pay link (and cancels its pending draft); a paid one cannot be cancelled.",
        read_only=False,
        destructive=True,
        idempotent=True,
        descriptions={"id": "The payment request's id."},
    ),
    ToolSpec(
        name="create_refund",
        method="POST",
        path="/api/v1/refunds",
        run=once(refund_create_outcome),
        guidance=(
            "full, amountSats, or fiatCurrency with fiatAmount, in any asset; the customer names their address "
            "at claimUrl, then approve_refund."
        ),
        read_only=False,
        same_result_as="get_refund",
    ),
    ToolSpec(
        name="get_refund",
        method="GET",
        path="/api/v1/refunds/{id}",
        run=lambda c: refund_json(refund_of(c)),
        guidance="Its status (Claimable, Claimed, Approved, Paid, Cancelled, Expired), claimUrl and payout.",
        read_only=True,
        idempotent=True,
        descriptions=REFUND_ID,
    ),
    ToolSpec(
        name="list_refunds",
        method="GET",
        path="/api/v1/refunds",
        run=lambda c: refund_page_json(user=c.user, query=c.arguments),
        guidance="Newest first; filter by status and draftId.",
        items_as="get_refund",
        summary="List refunds",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="approve_refund",
        method="POST",
        path="/api/v1/refunds/{id}/approve",
        run=lambda c: refund_json(refund_services.refund_approve(refund=refund_of(c))),
        guidance="The result's payout is the payment to make; the refund becomes Paid when the chain confirms it.",
        read_only=False,
        descriptions=REFUND_ID,
        same_result_as="get_refund",
    ),
    ToolSpec(
        name="cancel_refund",
        method="POST",
        path="/api/v1/refunds/{id}/cancel",
        run=lambda c: refund_json(refund_services.refund_cancel(refund=refund_of(c))),
        guidance="An open refund (and its payout draft while unpaid) is cancelled.",
        read_only=False,
        destructive=True,
        descriptions=REFUND_ID,
        same_result_as="get_refund",
    ),
    ToolSpec(
        name="get_rates",
        method="GET",
        path="/api/v1/rates",
        run=lambda c: rates_json(query=c.arguments),
        guidance="Fiat per one whole unit of each asset.",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="get_fee_schedule",
        method="GET",
        path="/api/v1/fees/schedule",
        run=lambda c: fee_schedule(),
        guidance="Tiers by USD value, minimum and maximum fee, and the dust rule.",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="quote_fee",
        method="POST",
        path="/api/v1/fees/quote",
        run=lambda c: fee_quote_json(user=c.user, body=c.arguments),
        required_too=("network", "currency"),
        guidance=(
            "Creates nothing. platformFee.placement: Output (in the payer's transaction), Accrued (to the "
            "account) or Waived (dust)."
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="get_accrued_fees",
        method="GET",
        path="/api/v1/fees/accrued",
        run=lambda c: balance_of(c.user).as_json(),
        guidance="When blocked is true, settle_accrued_fees before new SingleOutput or Lightning drafts.",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="settle_accrued_fees",
        method="POST",
        path="/api/v1/fees/accrued/settle",
        run=once(settlement_outcome),
        guidance="Pay it like any other draft.",
        read_only=False,
        same_result_as="get_draft",
    ),
    ToolSpec(
        name="list_webhooks",
        method="GET",
        path="/api/v1/webhooks",
        run=lambda c: webhook_page_json(user=c.user, query=c.arguments),
        guidance="The account's webhook endpoints (signing secrets are never shown again).",
        items_as="delete_webhook",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="test_pay_draft",
        method="POST",
        path="/api/v1/test-helpers/drafts/{id}/pay",
        run=lambda c: simulate_payment_json(
            user=c.user, draft_id=c.arguments["id"], body={k: v for k, v in c.arguments.items() if k != "id"}
        ),
        guidance=("Test keys only; real events and webhooks. confirmations 0 leaves it Seen."),
        read_only=False,
        same_result_as="get_draft",
        descriptions=DRAFT_ID
        | {
            "outcome": "exact (default); short or over: 5% off (AmountMismatch); split: two transactions; twice: a "
            "second transfer; late: expires first, then paid."
        },
    ),
    ToolSpec(
        name="test_expire_draft",
        method="POST",
        path="/api/v1/test-helpers/drafts/{id}/expire",
        run=lambda c: simulate_expiry_json(user=c.user, draft_id=c.arguments["id"]),
        guidance="Test keys only: a Pending test draft expires now (draft.expired).",
        read_only=False,
        destructive=True,
        same_result_as="get_draft",
        descriptions=DRAFT_ID,
    ),
    ToolSpec(
        name="test_reorg_draft",
        method="POST",
        path="/api/v1/test-helpers/drafts/{id}/reorg",
        run=lambda c: simulate_reorg_json(user=c.user, draft_id=c.arguments["id"]),
        guidance="Test keys only: the payment of a Seen test draft leaves the chain; back to Pending.",
        read_only=False,
        destructive=True,
        same_result_as="get_draft",
        descriptions=DRAFT_ID,
    ),
    ToolSpec(
        name="list_unmatched_transfers",
        method="GET",
        path="/api/v1/transfers",
        run=lambda c: transfer_page_json(user=c.user, query=c.arguments),
        guidance=("Newest first, each with candidateDraftIds; matched false: still unmatched."),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="attach_transfer",
        method="POST",
        path="/api/v1/transfers/{id}/attach",
        run=lambda c: transfer_attach_json(
            user=c.user, transfer_id=c.arguments["id"], body={k: v for k, v in c.arguments.items() if k != "id"}
        ),
        guidance=("Pays draftId (Pending or Expired, same address and asset); acceptAmount true when over 10% off."),
        read_only=False,
        descriptions={"id": "The unmatched transfer's id."},
        same_result_as="get_draft",
    ),
    ToolSpec(
        name="get_attention",
        method="GET",
        path="/api/v1/attention",
        run=lambda c: attention_body(user=c.user, api_key=c.api_key),
        guidance="Actions: accept_received, cancel_draft, attach_transfer, approve_refund, enable_webhook.",
        summary="What needs your attention",
        read_only=True,
        idempotent=True,
    ),
    *ACCOUNT_TOOLS,
)

BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}


@functools.cache
def tool_list() -> list[Tool]:
    """What tools/list answers (and what llms.txt lists); built once, the schemas do not change."""
    return [tool.as_mcp(BY_NAME) for tool in TOOLS]

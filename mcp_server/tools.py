"""The MCP tools: each is one REST operation, run through the same edge and service functions.

A tool names the REST operation it mirrors (method and path). Its scope, summary and
input and output schemas come from that operation's OpenAPI description, and its body
calls what the REST view calls, so the JSON a tool returns is the REST body.
"""

from __future__ import annotations

import functools
from typing import Any

from mcp_types import Tool

from accounts.models import User
from drafts import services as draft_services
from drafts.api.creation import create_draft_outcome
from drafts.api.edge import draft_batch_json, draft_page_json, tx_template_json
from drafts.api.test_helpers import simulate_expiry_json, simulate_payment_json, simulate_reorg_json
from drafts.documents import draft_fees_json
from drafts.presenters import draft_json, draft_status_json
from fees.api.edge import fee_quote_json, settlement_json
from fees.calculator import fee_schedule
from fees.ledger import balance_of
from mcp_server.account_tools import ACCOUNT_TOOLS
from mcp_server.spec import Call, ProblemBody, ToolSpec
from paylinks import services as paylink_services
from paylinks.api.edge import payment_request_create_outcome, payment_request_page
from paylinks.presenters import payment_request_json
from paylinks.selectors import payment_request_get
from payments.api.edge import rates_json
from refunds import services as refund_services
from refunds.api.edge import refund_create_outcome, refund_page
from refunds.presenters import refund_json
from refunds.selectors import refund_get
from webhooks.api.edge import webhook_page_json

__all__ = ["BY_NAME", "TOOLS", "Call", "ProblemBody", "ToolSpec", "tool_list"]


def create_draft_outcome_for(*, user: User, arguments: dict[str, Any]) -> dict[str, Any]:
    """POST /drafts with the Idempotency-Key header as the idempotency_key argument."""
    body = dict(arguments)
    key = body.pop("idempotency_key", None)
    outcome = create_draft_outcome(user=user, body=body, idempotency_key=key, key_field="idempotency_key")
    if outcome.status >= 400:
        raise ProblemBody(outcome.body)
    return outcome.body


def create_refund_for(*, user: User, arguments: dict[str, Any]) -> dict[str, Any]:
    """POST /refunds with the Idempotency-Key header as the idempotency_key argument."""
    body = dict(arguments)
    key = body.pop("idempotency_key", None)
    outcome = refund_create_outcome(user=user, body=body, idempotency_key=key, key_field="idempotency_key")
    if outcome.status >= 400:
        raise ProblemBody(outcome.body)
    return outcome.body


def create_payment_request_for(*, user: User, arguments: dict[str, Any]) -> dict[str, Any]:
    """POST /payment-requests with the Idempotency-Key header as the idempotency_key argument."""
    body = dict(arguments)
    key = body.pop("idempotency_key", None)
    outcome = payment_request_create_outcome(user=user, body=body, idempotency_key=key, key_field="idempotency_key")
    if outcome.status >= 400:
        raise ProblemBody(outcome.body)
    return outcome.body


def refund_of(call: Call):
    return refund_get(user=call.user, refund_id=call.arguments["id"])


def payment_request_of(call: Call):
    return payment_request_get(user=call.user, payment_request_id=call.arguments["id"])


REFUND_ID = {"id": "The refund's id (a UUID), as returned by create_refund or list_refunds."}
DRAFT_ID = {"id": "The draft's id (a UUID), as returned by create_draft or list_drafts."}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="create_draft",
        method="POST",
        path="/api/v1/drafts",
        run=lambda c: create_draft_outcome_for(user=c.user, arguments=c.arguments),
        guidance=(
            "Give network, currency, receiverAddress and either amountSats (base units) or fiatCurrency plus "
            "fiatAmount. The result's paymentUri (or, for Bitcoin MultiOutput, get_tx_template) tells the payer "
            "what to send; follow it with get_draft_status. Pass idempotency_key to make retries safe: the same "
            "key and input return the same draft."
        ),
        read_only=False,
        open_world=True,  # a Lightning address is resolved at its LNURL server
        descriptions={
            "idempotency_key": "Makes retries safe: same key and input return the first result (24 h, per account)."
        },
        required_too=("network", "currency"),
    ),
    ToolSpec(
        name="create_drafts_batch",
        method="POST",
        path="/api/v1/drafts/batch",
        run=lambda c: draft_batch_json(user=c.user, body=c.arguments),
        guidance=(
            "Up to 25 items, each {draft: <create_draft input without idempotency_key>, idempotencyKey}; one result "
            "per item in order: {index, draft, error}. A failed item does not stop the others."
        ),
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
        guidance="Paged {items, page, pageSize, total}; filter by status, network, method, currency, q, from, to.",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="get_draft_status",
        method="GET",
        path="/api/v1/drafts/{id}/status",
        run=lambda c: draft_status_json(c.draft),
        guidance=(
            "Poll this to watch a payment: Pending, then Seen once the transfer is seen, Confirmed at the "
            "required confirmations (also AmountMismatch, Expired, Cancelled)."
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
        guidance=(
            "For on-chain Bitcoin drafts: the exact outputs (receiver and fee), a bitcoin-cli "
            "walletcreatefundedpsbt line and a pay-to-many CSV. Other drafts are paid with their paymentUri."
        ),
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
        run=lambda c: create_payment_request_for(user=c.user, arguments=c.arguments),
        guidance=(
            "A pay link priced in fiat (fiatCurrency, fiatAmount) with the options the payer may pick from "
            "(currency, network, receiverAddress each); share the result's payUrl with the payer. The rate locks "
            "when the payer picks; the draft made then carries paymentRequestId and orderId. Pass idempotency_key "
            "to make retries safe."
        ),
        read_only=False,
        descriptions={
            "idempotency_key": "Makes retries safe: same key and input return the first result (24 h, per account)."
        },
    ),
    ToolSpec(
        name="get_payment_request",
        method="GET",
        path="/api/v1/payment-requests/{id}",
        run=lambda c: payment_request_json(payment_request_of(c)),
        guidance="Its status (Open, Paid, Expired, Cancelled), options, payUrl and the draft the payer's pick made.",
        read_only=True,
        idempotent=True,
        descriptions={"id": "The payment request's id (a UUID)."},
    ),
    ToolSpec(
        name="list_payment_requests",
        method="GET",
        path="/api/v1/payment-requests",
        run=lambda c: payment_request_page(user=c.user, query=c.arguments)[0],
        guidance="Newest first, paged with page and pageSize; the result is the list.",
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
        descriptions={"id": "The payment request's id (a UUID)."},
    ),
    ToolSpec(
        name="create_refund",
        method="POST",
        path="/api/v1/refunds",
        run=lambda c: create_refund_for(user=c.user, arguments=c.arguments),
        guidance=(
            "From a Confirmed draft (draftId): full, an exact amountSats, or fiatCurrency + fiatAmount, in the paid "
            "asset or another (currency, network). Give the result's claimUrl to the customer: they name their "
            "address, then approve_refund. Pass idempotency_key to make retries safe."
        ),
        read_only=False,
        descriptions={
            "idempotency_key": "Makes retries safe: same key and input return the first result (24 h, per account)."
        },
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
        run=lambda c: refund_page(user=c.user, query=c.arguments)[0],
        guidance="Newest first, paged with page and pageSize; the result is the list.",
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
            "Give network, currency and amountSats (base units) or fiatCurrency plus fiatAmount, optionally "
            "paymentMethod; creates nothing. platformFee.placement says whether the fee would be an output of the "
            "payer's transaction (Output), accrue to the account (Accrued) or be waived as dust (Waived)."
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
        run=lambda c: settlement_json(user=c.user, body=c.arguments),
        guidance="Opens one draft paying every accrued fee to the operator; pay it like any other draft.",
        read_only=False,
        same_result_as="get_draft",
    ),
    ToolSpec(
        name="list_webhooks",
        method="GET",
        path="/api/v1/webhooks",
        run=lambda c: webhook_page_json(user=c.user, query=c.arguments),
        guidance="The account's webhook endpoints (signing secrets are never shown again).",
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
        guidance=(
            "Test keys (pdk_test_) only: pays a test draft as a watcher would see it; its events reach the "
            "account's test webhooks. confirmations 0 leaves it Seen."
        ),
        read_only=False,
        same_result_as="get_draft",
        descriptions=DRAFT_ID,
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
    *ACCOUNT_TOOLS,
)

BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}


@functools.cache
def tool_list() -> list[Tool]:
    """What tools/list answers (and what llms.txt lists); built once, the schemas do not change."""
    return [tool.as_mcp() for tool in TOOLS]

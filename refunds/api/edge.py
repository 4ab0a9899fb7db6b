"""The bodies of the refund operations, shared by the REST views (refunds.api.views) and the MCP tools."""

from __future__ import annotations

from functools import partial

from django.http import Http404

from core.api.pagination import page_of
from core.api.problems import validated
from core.problems import NotFound
from drafts.idempotency import KeyClaim, KeyTaken, Outcome, run_idempotently
from drafts.selectors import draft_get
from refunds import services
from refunds.api.serializers import CreateRefundSerializer, RefundListQuerySerializer
from refunds.models import Refund
from refunds.presenters import refund_json
from refunds.selectors import refund_list


def refund_page_json(*, user, query: dict) -> dict:
    """GET /refunds: one page, newest first (core.api.pagination's envelope)."""
    params = RefundListQuerySerializer(data=query)
    params.is_valid(raise_exception=True)
    filters = params.validated_data
    page = page_of(refund_list(user=user, filters=filters), filters, within=refund_list(user=user, filters={}))
    return page.envelope([refund_json(r) for r in page.items])


def refund_create_outcome(*, user, body, idempotency_key: str | None, key_field: str = "Idempotency-Key") -> Outcome:
    """POST /refunds: issue once per (account, key, body); 201 and the refund, or a problem."""
    # Keys are per account and shared with other creations: the body is namespaced.
    return run_idempotently(
        user=user,
        key=idempotency_key,
        body={"refund": body},
        answer=refund_answer,
        work=partial(_create, user=user, body=body),
        key_field=key_field,
    )


def refund_answer(refund: Refund) -> Outcome:
    return Outcome(status=201, body=refund_json(refund))


def _create(key: KeyClaim | None, *, user, body) -> Refund | KeyTaken:
    fields = validated(CreateRefundSerializer, body)
    try:
        draft = draft_get(user=user, draft_id=fields["draftId"])
    except Http404:
        raise NotFound("You have no draft with this id.", field="draftId") from None
    return services.refund_issue(
        user=user,
        draft=draft,
        currency=fields.get("currency"),
        network=fields.get("network"),
        full=fields.get("full", False),
        amount_base_units=fields.get("amountSats"),
        fiat_currency=fields.get("fiatCurrency"),
        fiat_amount=fields.get("fiatAmount"),
        reason=fields.get("reason"),
        customer_email=fields.get("customerEmail"),
        expiry_hours=fields.get("expiryHours"),
        key=key,
    )

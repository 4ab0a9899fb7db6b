"""The bodies of the pay-link operations, shared by the REST views (paylinks.api.views) and the MCP tools."""

from __future__ import annotations

from functools import partial

from core.api.pagination import Page, page_of
from core.api.problems import validated
from drafts.idempotency import KeyClaim, KeyTaken, Outcome, run_idempotently
from paylinks import services
from paylinks.api.serializers import (
    CreatePaymentRequestSerializer,
    PaymentRequestListQuerySerializer,
)
from paylinks.models import PaymentRequest
from paylinks.presenters import payment_request_json
from paylinks.selectors import payment_request_list


def payment_request_page(*, user, query: dict) -> tuple[list[dict], Page]:
    """GET /payment-requests: one page's items (a plain array, as the spec shows it) and the page
    (its total and next cursor go in headers)."""
    params = PaymentRequestListQuerySerializer(data=query)
    params.is_valid(raise_exception=True)
    filters = params.validated_data
    found = payment_request_list(user=user, filters=filters)
    page = page_of(found, filters, within=payment_request_list(user=user, filters={}))
    return [payment_request_json(p) for p in page.items], page


def payment_request_create_outcome(
    *, user, body, idempotency_key: str | None, key_field: str = "Idempotency-Key"
) -> Outcome:
    """POST /payment-requests: create once per (account, key, body); 201 and the request, or a problem."""
    # Keys are per account and shared with draft creation: the body is namespaced so a
    # key reused across the two endpoints is a 422, never the other endpoint's answer.
    return run_idempotently(
        user=user,
        key=idempotency_key,
        body={"paymentRequest": body},
        answer=payment_request_answer,
        work=partial(_create, user=user, body=body),
        key_field=key_field,
    )


def payment_request_answer(payment_request: PaymentRequest) -> Outcome:
    return Outcome(status=201, body=payment_request_json(payment_request))


def _create(key: KeyClaim | None, *, user, body) -> PaymentRequest | KeyTaken:
    fields = validated(CreatePaymentRequestSerializer, body)
    return services.payment_request_create(
        user=user,
        fiat_currency=fields["fiatCurrency"],
        fiat_amount=fields["fiatAmount"],
        options=fields["options"],
        order_id=fields.get("orderId"),
        memo=fields.get("memo"),
        expiry_hours=fields.get("expiryHours"),
        return_url=fields.get("returnUrl"),
        key=key,
    )

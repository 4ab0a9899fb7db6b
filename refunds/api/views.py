"""Refunds (owner, API key or session) and the claim (anonymous customer, token in the
path). Thin: validate, call one service or selector, present."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api.pagination import page_of
from config.api.problems import problem_from_validation
from config.api.responses import outcome_response
from config.problems import NotFound
from config.routing import UUID_PATTERN
from drafts.api.views import IDEMPOTENCY_HEADER
from drafts.idempotency import Outcome, run_idempotently, validate_key
from drafts.selectors import draft_get
from paylinks.api.views import CheckoutThrottle
from refunds import services
from refunds.api.serializers import (
    CreateRefundSerializer,
    RefundClaimResponseSerializer,
    RefundClaimSerializer,
    RefundListQuerySerializer,
    RefundResponseSerializer,
)
from refunds.presenters import refund_claim_json, refund_json
from refunds.selectors import refund_by_token, refund_get, refund_list


class RefundViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN
    required_scopes = {
        "list": "refunds:read",
        "retrieve": "refunds:read",
        "create": "refunds:write",
        "approve": "refunds:write",
        "cancel": "refunds:write",
    }
    # 404: an unknown draftId; 409: a draft that cannot be refunded, a refund in the wrong
    # state, a reused Idempotency-Key in progress; 422: a key reused with another body;
    # 503: rates down while a fiat price or another asset is valued.
    problem_statuses = {"create": (404, 409, 422, 503), "approve": (409, 503), "cancel": (409,)}

    @extend_schema(
        summary="List refunds, newest first (a plain array; the total is in X-Total-Count)",
        parameters=[RefundListQuerySerializer],
        responses=RefundResponseSerializer(many=True),
    )
    def list(self, request):
        items, total = refund_page(user=request.user, query=request.query_params.dict())
        return Response(items, headers={"X-Total-Count": str(total)})

    @extend_schema(
        summary="Issue a refund of a Confirmed draft: a claim link for the customer to name their address",
        request=CreateRefundSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: RefundResponseSerializer},
    )
    def create(self, request):
        outcome = refund_create_outcome(
            user=request.user, body=request.data, idempotency_key=request.headers.get("Idempotency-Key")
        )
        return outcome_response(outcome, url_name="refund-detail")

    @extend_schema(summary="Get a refund", responses=RefundResponseSerializer)
    def retrieve(self, request, pk=None):
        return Response(refund_json(refund_get(user=request.user, refund_id=pk)))

    @extend_schema(
        summary="Approve a Claimed refund: creates the payout draft you pay from your own wallet",
        request=None,
        responses=RefundResponseSerializer,
    )
    @action(detail=True, methods=["post"])
    def approve(self, request, pk=None):
        refund = refund_get(user=request.user, refund_id=pk)
        return Response(refund_json(services.refund_approve(refund=refund)))

    @extend_schema(
        summary="Cancel an open refund (and its payout draft while unpaid)",
        request=None,
        responses=RefundResponseSerializer,
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        refund = refund_get(user=request.user, refund_id=pk)
        return Response(refund_json(services.refund_cancel(refund=refund)))


# Edge functions: the bodies of the operations above, shared by the REST views and the MCP tools.


def refund_page(*, user, query: dict) -> tuple[list[dict], int]:
    """GET /refunds: one page (a plain array) and the total for X-Total-Count."""
    params = RefundListQuerySerializer(data=query)
    params.is_valid(raise_exception=True)
    filters = params.validated_data
    page = page_of(refund_list(user=user, filters=filters), page=filters["page"], page_size=filters["pageSize"])
    return [refund_json(r) for r in page.items], page.total


def refund_create_outcome(*, user, body, idempotency_key: str | None, key_field: str = "Idempotency-Key") -> Outcome:
    """POST /refunds: issue once per (account, key, body); 201 and the refund, or a problem."""
    if idempotency_key is not None:
        validate_key(idempotency_key, field=key_field)
    # Keys are per account and shared with other creations: the body is namespaced.
    return run_idempotently(
        user=user, key=idempotency_key, body={"refund": body}, work=lambda record: _create(user, body, record)
    )


def _create(user, body, record) -> Outcome:
    data = CreateRefundSerializer(data=body)
    try:
        data.is_valid(raise_exception=True)
    except ValidationError as exc:  # as a Problem, so the idempotency record keeps the 400
        raise problem_from_validation(exc) from None
    fields = data.validated_data
    try:
        draft = draft_get(user=user, draft_id=fields["draftId"])
    except Http404:
        raise NotFound("You have no draft with this id.", field="draftId") from None
    created: dict[str, Outcome] = {}

    def store(refund) -> None:  # inside the refund's transaction
        created["outcome"] = Outcome(status=201, body=refund_json(refund))
        record(created["outcome"])

    services.refund_issue(
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
        on_created=store,
    )
    return created["outcome"]


# --- Claim (customer side) -------------------------------------------------------------


class ClaimView(APIView):
    """Anonymous: the token in the path is the customer's only credential (as a pay link's)."""

    public = True
    authentication_classes: list = []
    throttle_classes = [CheckoutThrottle]

    @property
    def throttle_rates(self) -> dict[str, str]:
        return settings.CHECKOUT_RATE_LIMITS


TOKEN_PARAMETER = OpenApiParameter("token", str, OpenApiParameter.PATH, description="The claim link's token")


class RefundClaimView(ClaimView):
    problem_statuses = {"POST": (409,)}

    @extend_schema(
        summary="What the customer needs to claim a refund (no other merchant data)",
        parameters=[TOKEN_PARAMETER],
        responses=RefundClaimResponseSerializer,
        auth=[],
    )
    def get(self, request, token: str):
        return Response(refund_claim_json(refund_by_token(token=token)))

    @extend_schema(
        summary="Claim a refund: name the address (checked for the refund's network) it is sent to",
        parameters=[TOKEN_PARAMETER],
        request=RefundClaimSerializer,
        responses=RefundClaimResponseSerializer,
        auth=[],
    )
    def post(self, request, token: str):
        refund_by_token(token=token)  # 404 before any work for an unknown token
        body = RefundClaimSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        refund = services.refund_claim(token=token, refund_address=body.validated_data["refundAddress"])
        return Response(refund_claim_json(refund))

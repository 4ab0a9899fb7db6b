"""Refunds (owner, API key or session) and the claim (anonymous customer, token in the
path). Thin: validate, call one service or selector, present."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import paged_envelope_serializer
from core.api.responses import IDEMPOTENCY_HEADER, idempotency_key_of, outcome_response
from core.routing import UUID_PATTERN
from paylinks.api.views import CheckoutThrottle
from refunds import services
from refunds.api.edge import refund_create_outcome, refund_page_json
from refunds.api.serializers import (
    CreateRefundSerializer,
    RefundClaimResponseSerializer,
    RefundClaimSerializer,
    RefundListQuerySerializer,
    RefundResponseSerializer,
)
from refunds.presenters import refund_claim_json, refund_json
from refunds.selectors import refund_by_token, refund_get


class RefundViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN
    # 404: an unknown draftId; 409: a draft that cannot be refunded, a refund in the wrong
    # state, a reused Idempotency-Key in progress; 422: a key reused with another body;
    # 503: rates down while a fiat price or another asset is valued.
    problem_statuses = {"create": (404, 409, 422, 503), "approve": (409, 503), "cancel": (409,)}

    @extend_schema(
        summary="List refunds, newest first",
        parameters=[RefundListQuerySerializer],
        responses=paged_envelope_serializer("RefundList", RefundResponseSerializer),
    )
    def list(self, request):
        return Response(refund_page_json(user=request.user, query=request.query_params.dict()))

    @extend_schema(
        summary="Issue a refund of a Confirmed draft: a claim link for the customer to name their address",
        request=CreateRefundSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: RefundResponseSerializer},
    )
    def create(self, request):
        outcome = refund_create_outcome(
            user=request.user, body=request.data, idempotency_key=idempotency_key_of(request)
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
        # A session's role (the support limit, refunds.limits); a key has none.
        return Response(refund_json(services.refund_approve(refund=refund, role=getattr(request, "role", None))))

    @extend_schema(
        summary="Cancel an open refund (and its payout draft while unpaid)",
        request=None,
        responses=RefundResponseSerializer,
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        refund = refund_get(user=request.user, refund_id=pk)
        return Response(refund_json(services.refund_cancel(refund=refund)))


# --- Claim (customer side) -------------------------------------------------------------


class ClaimView(APIView):
    """Anonymous: the token in the path is the customer's only credential (as a pay link's)."""

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

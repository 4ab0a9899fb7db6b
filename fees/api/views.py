from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.responses import IDEMPOTENCY_HEADER, idempotency_key_of, outcome_response
from drafts.api.serializers import (
    AccruedFeesResponseSerializer,
    DraftResponseSerializer,
    FeeQuoteRequestSerializer,
    FeeQuoteResponseSerializer,
    SettleAccruedFeesRequestSerializer,
)
from fees.api.edge import fee_quote_json, settlement_outcome
from fees.api.serializers import FeeScheduleSerializer
from fees.calculator import fee_schedule
from fees.ledger import balance_of


class FeeScheduleView(APIView):
    @extend_schema(summary="The platform fee schedule (tiers, limits, dust rule)", responses=FeeScheduleSerializer)
    def get(self, request):
        return Response(fee_schedule())


class AccruedFeesView(APIView):
    @extend_schema(
        summary="Fees accrued by single-output and Lightning payments, and whether the account is blocked",
        responses=AccruedFeesResponseSerializer,
    )
    def get(self, request):
        return Response(balance_of(request.user).as_json())


class SettleAccruedFeesView(APIView):
    problem_statuses = {"POST": (409, 503)}

    @extend_schema(
        summary="Open one draft that pays all accrued fees to the operator",
        request=SettleAccruedFeesRequestSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: DraftResponseSerializer},
    )
    def post(self, request):
        outcome = settlement_outcome(user=request.user, body=request.data, idempotency_key=idempotency_key_of(request))
        return outcome_response(outcome, url_name="draft-detail")


class FeeQuoteView(APIView):
    @extend_schema(
        summary="The platform fee for an amount, currency and network, without creating anything",
        request=FeeQuoteRequestSerializer,
        responses=FeeQuoteResponseSerializer,
    )
    def post(self, request):
        return Response(fee_quote_json(user=request.user, body=request.data))

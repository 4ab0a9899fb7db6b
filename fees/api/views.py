from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api.responses import created_response, resource_url
from drafts.api.serializers import DraftResponseSerializer
from drafts.presenters import draft_json
from fees.api.serializers import (
    AccruedFeesResponseSerializer,
    FeeScheduleSerializer,
    SettleAccruedFeesRequestSerializer,
)
from fees.calculator import fee_schedule
from fees.ledger import balance_of
from fees.services import fee_settle


class FeeScheduleView(APIView):
    required_scopes = {"GET": "fees:read"}

    @extend_schema(summary="The platform fee schedule (tiers, limits, dust rule)", responses=FeeScheduleSerializer)
    def get(self, request):
        return Response(fee_schedule())


class AccruedFeesView(APIView):
    required_scopes = {"GET": "fees:read"}

    @extend_schema(
        summary="Fees accrued by single-output and Lightning payments, and whether the account is blocked",
        responses=AccruedFeesResponseSerializer,
    )
    def get(self, request):
        return Response(balance_of(request.user).as_json())


class SettleAccruedFeesView(APIView):
    required_scopes = {"POST": "fees:write"}

    @extend_schema(
        summary="Open one draft that pays all accrued fees to the operator",
        request=SettleAccruedFeesRequestSerializer,
        responses={201: DraftResponseSerializer},
    )
    def post(self, request):
        body = SettleAccruedFeesRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        settlement = fee_settle(user=request.user, **body.validated_data)
        return created_response(draft_json(settlement), location=resource_url("draft-detail", pk=settlement.id))

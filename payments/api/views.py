from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from payments.api.edge import rates_json
from payments.api.serializers import RatesResponseSerializer


class RatesView(APIView):
    problem_statuses = {"GET": (503,)}

    @extend_schema(
        summary="Exchange rates: fiat per 1 unit of each asset, with source and fetch time",
        parameters=[
            OpenApiParameter("ccy", str, description="ISO 4217 fiat code (165 supported), default USD"),
            OpenApiParameter("asset", str, description="BTC, ETH, SOL, USDC, USDT or EURC; all when omitted"),
        ],
        responses=RatesResponseSerializer,
    )
    def get(self, request: Request) -> Response:
        return Response(rates_json(query=request.query_params))

"""The Solana Pay transaction request of a draft (payer-facing, anonymous: the draft id in the
path is the handle, as a pay link's token is). Thin: drafts.solana_pay does the work."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chainwatch.solana_pay import transaction_request, transaction_request_label
from paylinks.api.views import CheckoutThrottle

# The schema names a `pk` path parameter `id` (SCHEMA_COERCE_PATH_PK), so this one is `id` too.
DRAFT_PARAMETER = OpenApiParameter("id", str, OpenApiParameter.PATH, description="The draft's id")


class SolanaPayTransactionRequestView(APIView):
    """Solana Pay answers JSON to any origin (the wallet fetches it): CORS `*` on every answer."""

    authentication_classes: list[type] = []
    throttle_classes = [CheckoutThrottle]
    # An unknown or non-Solana draft, a draft no longer Pending, the Solana node down.
    problem_statuses = {"GET": (404,), "POST": (404, 409, 503)}

    @property
    def throttle_rates(self) -> dict[str, str]:
        return settings.CHECKOUT_RATE_LIMITS

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Access-Control-Allow-Origin"] = "*"
        response["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
        response["Access-Control-Allow-Headers"] = "Content-Type"
        return response

    @extend_schema(
        summary="Solana Pay transaction request: the label and icon a wallet shows",
        parameters=[DRAFT_PARAMETER],
        responses=inline_serializer(
            "SolanaPayLabel", {"label": serializers.CharField(), "icon": serializers.URLField()}
        ),
        auth=[],
    )
    def get(self, request: Request, pk: UUID) -> Response:
        return Response(transaction_request_label(draft_id=pk))

    @extend_schema(
        summary="Solana Pay transaction request: the unsigned transaction paying the draft from `account`",
        parameters=[DRAFT_PARAMETER],
        request=inline_serializer("SolanaPayAccount", {"account": serializers.CharField()}),
        responses=inline_serializer(
            "SolanaPayTransaction", {"transaction": serializers.CharField(), "message": serializers.CharField()}
        ),
        auth=[],
    )
    def post(self, request: Request, pk: UUID) -> Response:
        account = request.data.get("account") if isinstance(request.data, dict) else None
        return Response(transaction_request(draft_id=pk, account=account))

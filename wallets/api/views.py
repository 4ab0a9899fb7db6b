from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.response import Response

from core.api.pagination import paged_envelope_serializer
from core.api.responses import IDEMPOTENCY_HEADER, idempotency_key_of, outcome_response
from core.routing import UUID_PATTERN
from wallets.api.edge import (
    receiving_wallet_archive_json,
    receiving_wallet_create_outcome,
    receiving_wallet_get_json,
    receiving_wallet_page_json,
)
from wallets.api.serializers import (
    ReceivingWalletCreateRequestSerializer,
    ReceivingWalletListQuerySerializer,
    ReceivingWalletSerializer,
)


class ReceivingWalletViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN
    problem_statuses = {"create": (409,)}  # wallet_exists

    @extend_schema(
        summary="List receiving wallets, newest first",
        parameters=[ReceivingWalletListQuerySerializer],
        responses=paged_envelope_serializer("ReceivingWalletList", ReceivingWalletSerializer),
    )
    def list(self, request):
        return Response(receiving_wallet_page_json(user=request.user, query=request.query_params.dict()))

    @extend_schema(
        summary="Register a receiving wallet by its public descriptor (private keys refused)",
        request=ReceivingWalletCreateRequestSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={200: ReceivingWalletSerializer},
    )
    def create(self, request):
        outcome = receiving_wallet_create_outcome(
            user=request.user, body=request.data, idempotency_key=idempotency_key_of(request)
        )
        return outcome_response(outcome, url_name="receiving-wallets-detail")

    @extend_schema(summary="Read a receiving wallet", responses=ReceivingWalletSerializer)
    def retrieve(self, request, pk=None):
        return Response(receiving_wallet_get_json(user=request.user, wallet_id=pk))

    @extend_schema(
        summary="Archive a receiving wallet: no more addresses; its drafts keep theirs",
        responses={200: ReceivingWalletSerializer},
    )
    def destroy(self, request, pk=None):
        return Response(receiving_wallet_archive_json(user=request.user, wallet_id=pk))

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import account_of
from chainwatch.api.edge import transfer_attach_json, transfer_page_json
from chainwatch.api.serializers import (
    AttachTransferRequestSerializer,
    TransferListQuerySerializer,
    TransferListResponseSerializer,
)
from core.routing import UUID_PATTERN
from drafts.api.serializers import DraftResponseSerializer


class TransferViewSet(viewsets.ViewSet):
    """Transfers to your addresses that paid none of your drafts."""

    lookup_value_regex = UUID_PATTERN

    @extend_schema(
        summary="Transfers to your addresses that pay none of your drafts (newest first)",
        parameters=[TransferListQuerySerializer],
        responses=TransferListResponseSerializer,
    )
    def list(self, request: Request) -> Response:
        return Response(transfer_page_json(user=account_of(request), query=request.query_params))

    @extend_schema(
        summary="Attach an unmatched transfer to one of your Pending or Expired drafts",
        request=AttachTransferRequestSerializer,
        responses=DraftResponseSerializer,
    )
    @action(detail=True, methods=["post"])
    def attach(self, request: Request, pk: str) -> Response:
        return Response(transfer_attach_json(user=account_of(request), transfer_id=pk, body=request.data))

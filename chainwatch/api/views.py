from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from chainwatch.api.serializers import (
    AttachTransferRequestSerializer,
    TransferListQuerySerializer,
    TransferListResponseSerializer,
)
from chainwatch.unmatched import transfer_attach, unmatched_json, unmatched_list
from core.api.pagination import page_of
from core.routing import UUID_PATTERN
from drafts.api.serializers import DraftResponseSerializer
from drafts.presenters import draft_json


class TransferViewSet(viewsets.ViewSet):
    """Transfers to your addresses that paid none of your drafts."""

    lookup_value_regex = UUID_PATTERN

    @extend_schema(
        summary="Transfers to your addresses that pay none of your drafts (newest first)",
        parameters=[TransferListQuerySerializer],
        responses=TransferListResponseSerializer,
    )
    def list(self, request):
        query = TransferListQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        reports = unmatched_list(user=request.user, matched=params.get("matched"))
        page = page_of(reports, page=params["page"], page_size=params["pageSize"])
        return Response(page.envelope([unmatched_json(r) for r in page.items]))

    @extend_schema(
        summary="Attach an unmatched transfer to one of your Pending or Expired drafts",
        request=AttachTransferRequestSerializer,
        responses=DraftResponseSerializer,
    )
    @action(detail=True, methods=["post"])
    def attach(self, request, pk=None):
        body = AttachTransferRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        draft = transfer_attach(
            user=request.user,
            report_id=pk,
            draft_id=body.validated_data["draftId"],
            accept_amount=body.validated_data["acceptAmount"],
        )
        return Response(draft_json(draft))

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import account_of
from accounts.languages import supported
from core.api.responses import IDEMPOTENCY_HEADER, idempotency_key_of, outcome_response
from core.problems import Problem
from core.routing import UUID_PATTERN
from drafts import services
from drafts.api.creation import create_draft_outcome
from drafts.api.edge import draft_batch_json, draft_page_json, tx_template_json
from drafts.api.serializers import (
    BatchCreateDraftsRequestSerializer,
    BatchDraftResultSerializer,
    CreateDraftRequestSerializer,
    DraftFeesResponseSerializer,
    DraftListQuerySerializer,
    DraftListResponseSerializer,
    DraftResponseSerializer,
    DraftStatusResponseSerializer,
    TxTemplateResponseSerializer,
)
from drafts.documents import draft_fees_json, draft_pdf
from drafts.presenters import draft_json, draft_status_json
from drafts.selectors import draft_get

CREATE_DRAFT_EXAMPLES = [
    OpenApiExample(
        "USDC on Base, exact amount",
        value={
            "network": "Base",
            "currency": "USDC",
            "receiverAddress": "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
            "amountSats": 25_000_000,
            "memo": "Invoice 1042",
        },
        request_only=True,
    ),
    OpenApiExample(
        "BTC priced in EUR, multi-output PSBT template",
        value={
            "network": "Mainnet",
            "currency": "BTC",
            "paymentMethod": "MultiOutput",
            "receiverAddress": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
            "fiatCurrency": "EUR",
            "fiatAmount": 49.9,
        },
        request_only=True,
    ),
    OpenApiExample(
        "SOL, single transfer with a QR payment URI",
        value={
            "network": "Solana",
            "currency": "SOL",
            "receiverAddress": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
            "fiatCurrency": "USD",
            "fiatAmount": 12,
            "expiryHours": 2,
        },
        request_only=True,
    ),
]


class DraftViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN
    # Their own rate limits per key and per account (core.ratelimits), besides the read/write one.
    cost_classes = {"batch": "batch", "pdf": "pdf", "tx_template": "tx-template"}
    problem_statuses = {
        "create": (402, 409, 422, 503),
        "cancel": (409,),
        "accept_received": (409,),
        "requote": (409, 503),
        "tx_template": (409,),
    }

    @extend_schema(
        summary="List drafts, newest first, with filters and paging",
        parameters=[DraftListQuerySerializer],
        responses=DraftListResponseSerializer,
    )
    def list(self, request: Request) -> Response:
        return Response(draft_page_json(user=account_of(request), query=request.query_params.dict()))

    @extend_schema(
        summary="Create a draft (exact amount or fiat-priced)",
        request=CreateDraftRequestSerializer,
        examples=CREATE_DRAFT_EXAMPLES,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: DraftResponseSerializer},
    )
    def create(self, request: Request) -> Response:
        outcome = create_draft_outcome(
            user=account_of(request), body=request.data, idempotency_key=idempotency_key_of(request)
        )
        return outcome_response(outcome, url_name="draft-detail")

    @extend_schema(
        summary="Create up to 25 drafts in one call, one result per item",
        request=BatchCreateDraftsRequestSerializer,
        responses=BatchDraftResultSerializer(many=True),
    )
    @action(detail=False, methods=["post"])
    def batch(self, request: Request) -> Response:
        return Response(draft_batch_json(user=account_of(request), body=request.data))

    @extend_schema(summary="Get a draft", responses=DraftResponseSerializer)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(draft_json(draft_get(user=account_of(request), draft_id=pk)))

    @extend_schema(
        summary="Status, transaction id and confirmations of a draft", responses=DraftStatusResponseSerializer
    )
    @action(detail=True, methods=["get"])
    def status(self, request: Request, pk: str) -> Response:
        return Response(draft_status_json(draft_get(user=account_of(request), draft_id=pk)))

    @extend_schema(summary="Cancel a Pending or AmountMismatch draft", request=None, responses=DraftResponseSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str) -> Response:
        draft = services.draft_cancel(draft=draft_get(user=account_of(request), draft_id=pk))
        return Response(draft_json(draft))

    @extend_schema(
        summary="Accept a received amount that differs from the billed one",
        request=None,
        responses=DraftResponseSerializer,
    )
    @action(detail=True, methods=["post"], url_path="accept-received")
    def accept_received(self, request: Request, pk: str) -> Response:
        draft = services.draft_accept_received(draft=draft_get(user=account_of(request), draft_id=pk))
        return Response(draft_json(draft))

    @extend_schema(
        summary="Lock a new rate for a fiat-priced draft whose quote expired",
        request=None,
        responses=DraftResponseSerializer,
    )
    @action(detail=True, methods=["post"])
    def requote(self, request: Request, pk: str) -> Response:
        draft = services.draft_requote(draft=draft_get(user=account_of(request), draft_id=pk))
        return Response(draft_json(draft))

    @extend_schema(summary="The fee breakdown of a draft", responses=DraftFeesResponseSerializer)
    @action(detail=True, methods=["get"])
    def fees(self, request: Request, pk: str) -> Response:
        return Response(draft_fees_json(draft_get(user=account_of(request), draft_id=pk)))

    @extend_schema(
        summary="The draft as a PDF: its payment request with the QR code, or its receipt once Confirmed",
        parameters=[
            OpenApiParameter(
                "lang",
                OpenApiTypes.STR,
                OpenApiParameter.QUERY,
                enum=[code for code, _name in settings.LANGUAGES],
                description="The PDF's language (default: the account's language, else English)",
            )
        ],
        responses={(200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY)},
    )
    @action(detail=True, methods=["get"])
    def pdf(self, request: Request, pk: str) -> HttpResponse:
        language = None
        if (wanted := request.query_params.get("lang")) is not None:
            language = supported(wanted)
            if language is None:
                codes = ", ".join(code for code, _name in settings.LANGUAGES)
                raise Problem(f"lang must be one of: {codes}.", code="invalid_choice", field="lang")
        draft = draft_get(user=account_of(request), draft_id=pk)
        response = HttpResponse(draft_pdf(draft, language=language), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="draft-{draft.id}.pdf"'
        return response

    @extend_schema(
        summary="Exact outputs, a bitcoin-cli line and a pay-to-many CSV for a Bitcoin draft",
        responses=TxTemplateResponseSerializer,
    )
    @action(detail=True, methods=["get"], url_path="tx-template")
    def tx_template(self, request: Request, pk: str) -> Response:
        return Response(tx_template_json(draft=draft_get(user=account_of(request), draft_id=pk)))

from __future__ import annotations

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import page_of
from core.api.problems import problem_from_validation
from core.api.responses import created_response, outcome_response, resource_url
from core.problems import Conflict, Problem
from core.routing import UUID_PATTERN
from core.wire import json_number
from drafts import services
from drafts.api.creation import create_draft_outcome
from drafts.api.serializers import (
    AccruedFeesResponseSerializer,
    BatchCreateDraftsRequestSerializer,
    BatchDraftItemSerializer,
    BatchDraftResultSerializer,
    CreateDraftRequestSerializer,
    DraftFeesResponseSerializer,
    DraftListQuerySerializer,
    DraftListResponseSerializer,
    DraftResponseSerializer,
    DraftStatusResponseSerializer,
    FeeQuoteRequestSerializer,
    FeeQuoteResponseSerializer,
    SettleAccruedFeesRequestSerializer,
    TxTemplateResponseSerializer,
)
from drafts.creation import fee_placement_estimate
from drafts.documents import draft_fees_json, draft_pdf, draft_tx_template
from drafts.idempotency import Outcome
from drafts.planning import fee_estimate
from drafts.presenters import draft_json, draft_status_json
from drafts.requests import DraftRequest
from drafts.selectors import draft_get, draft_list
from drafts.settlement import settlement_open
from fees.ledger import balance_of
from payments.registry import format_amount

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
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER, description="Makes retries safe (24 h, per account)"
)


class DraftViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN
    required_scopes = {
        "list": "drafts:read",
        "create": "drafts:write",
        "batch": "drafts:write",
        "retrieve": "drafts:read",
        "status": "drafts:read",
        "cancel": "drafts:write",
        "accept_received": "drafts:write",
        "requote": "drafts:write",
        "fees": "drafts:read",
        "pdf": "drafts:read",
        "tx_template": "drafts:read",
    }
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
    def list(self, request):
        return Response(draft_page_json(user=request.user, query=request.query_params.dict()))

    @extend_schema(
        summary="Create a draft (exact amount or fiat-priced)",
        request=CreateDraftRequestSerializer,
        examples=CREATE_DRAFT_EXAMPLES,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: DraftResponseSerializer},
    )
    def create(self, request):
        outcome = create_draft_outcome(
            user=request.user, body=request.data, idempotency_key=request.headers.get("Idempotency-Key")
        )
        return outcome_response(outcome, url_name="draft-detail")

    @extend_schema(
        summary="Create up to 25 drafts in one call, one result per item",
        request=BatchCreateDraftsRequestSerializer,
        responses=BatchDraftResultSerializer(many=True),
    )
    @action(detail=False, methods=["post"])
    def batch(self, request):
        return Response(draft_batch_json(user=request.user, body=request.data))

    @extend_schema(summary="Get a draft", responses=DraftResponseSerializer)
    def retrieve(self, request, pk=None):
        return Response(draft_json(draft_get(user=request.user, draft_id=pk)))

    @extend_schema(
        summary="Status, transaction id and confirmations of a draft", responses=DraftStatusResponseSerializer
    )
    @action(detail=True, methods=["get"])
    def status(self, request, pk=None):
        return Response(draft_status_json(draft_get(user=request.user, draft_id=pk)))

    @extend_schema(summary="Cancel a Pending or AmountMismatch draft", request=None, responses=DraftResponseSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        draft = services.draft_cancel(draft=draft_get(user=request.user, draft_id=pk))
        return Response(draft_json(draft))

    @extend_schema(
        summary="Accept a received amount that differs from the billed one",
        request=None,
        responses=DraftResponseSerializer,
    )
    @action(detail=True, methods=["post"], url_path="accept-received")
    def accept_received(self, request, pk=None):
        draft = services.draft_accept_received(draft=draft_get(user=request.user, draft_id=pk))
        return Response(draft_json(draft))

    @extend_schema(
        summary="Lock a new rate for a fiat-priced draft whose quote expired",
        request=None,
        responses=DraftResponseSerializer,
    )
    @action(detail=True, methods=["post"])
    def requote(self, request, pk=None):
        draft = services.draft_requote(draft=draft_get(user=request.user, draft_id=pk))
        return Response(draft_json(draft))

    @extend_schema(summary="The fee breakdown of a draft", responses=DraftFeesResponseSerializer)
    @action(detail=True, methods=["get"])
    def fees(self, request, pk=None):
        return Response(draft_fees_json(draft_get(user=request.user, draft_id=pk)))

    @extend_schema(
        summary="The draft as a PDF with its payment QR code",
        responses={(200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY)},
    )
    @action(detail=True, methods=["get"])
    def pdf(self, request, pk=None):
        draft = draft_get(user=request.user, draft_id=pk)
        response = HttpResponse(draft_pdf(draft), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="draft-{draft.id}.pdf"'
        return response

    @extend_schema(
        summary="Exact outputs, a bitcoin-cli line and a pay-to-many CSV for a Bitcoin draft",
        responses=TxTemplateResponseSerializer,
    )
    @action(detail=True, methods=["get"], url_path="tx-template")
    def tx_template(self, request, pk=None):
        return Response(tx_template_json(draft=draft_get(user=request.user, draft_id=pk)))


# Edge functions: the bodies of the operations above, shared by the REST views and the MCP tools.


def draft_page_json(*, user, query: dict) -> dict:
    """GET /drafts: one page of the account's drafts for the (unvalidated) query parameters."""
    params = DraftListQuerySerializer(data=query)
    params.is_valid(raise_exception=True)
    filters = params.validated_data
    page = page_of(draft_list(user=user, filters=filters), page=filters["page"], page_size=filters["pageSize"])
    return page.envelope([draft_json(d) for d in page.items])


def draft_batch_json(*, user, body) -> list[dict]:
    """POST /drafts/batch: one result per item, each created (or refused) on its own."""
    request = BatchCreateDraftsRequestSerializer(data=body)
    request.is_valid(raise_exception=True)
    return [_batch_item(user, index, raw) for index, raw in enumerate(request.validated_data["items"])]


def _batch_item(user, index: int, raw: dict) -> dict:
    item = BatchDraftItemSerializer(data=raw)
    if not item.is_valid():
        return {"index": index, "error": _error_text(_item_problem(item).document())}
    try:
        outcome = create_draft_outcome(
            user=user,
            body=item.validated_data["draft"],
            idempotency_key=item.validated_data.get("idempotencyKey"),
            key_field="idempotencyKey",
        )
    except Problem as exc:
        outcome = Outcome(status=exc.status_code, body=exc.document())
    if outcome.status >= 400:
        return {"index": index, "error": _error_text(outcome.body)}
    return {"index": index, "draft": outcome.body, "error": None}


def tx_template_json(*, draft) -> dict:
    """GET /drafts/{id}/tx-template: a 409 for drafts that are not paid by an on-chain Bitcoin transaction."""
    template = draft_tx_template(draft)
    if template is None:
        raise Conflict(
            "Transaction templates are for on-chain Bitcoin drafts; pay this draft with its paymentUri.",
            code="tx_template_not_applicable",
        )
    return template


def _error_text(problem: dict) -> str:
    fields = [e["field"] for e in problem.get("errors", []) if e.get("field")]
    where = f" ({', '.join(fields)})" if fields else ""
    return f"{problem['code']}: {problem['detail']}{where}"


def _item_problem(item: BatchDraftItemSerializer) -> Problem:
    return problem_from_validation(ValidationError(item.errors))


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
    problem_statuses = {"POST": (409, 503)}

    @extend_schema(
        summary="Open one draft that pays all accrued fees to the operator",
        request=SettleAccruedFeesRequestSerializer,
        responses={201: DraftResponseSerializer},
    )
    def post(self, request):
        body = settlement_json(user=request.user, body=request.data)
        return created_response(body, location=resource_url("draft-detail", pk=body["id"]))


def settlement_json(*, user, body) -> dict:
    """POST /fees/accrued/settle: the settlement draft; shared by REST and MCP."""
    request = SettleAccruedFeesRequestSerializer(data=body)
    request.is_valid(raise_exception=True)
    return draft_json(settlement_open(user=user, **request.validated_data))


class FeeQuoteView(APIView):
    required_scopes = {"POST": "fees:read"}

    @extend_schema(
        summary="The platform fee for an amount, currency and network, without creating anything",
        request=FeeQuoteRequestSerializer,
        responses=FeeQuoteResponseSerializer,
    )
    def post(self, request):
        return Response(fee_quote_json(body=request.data))


def fee_quote_json(*, body) -> dict:
    """POST /fees/quote: what a draft of this amount would be charged now; shared by REST and MCP."""
    request = FeeQuoteRequestSerializer(data=body)
    request.is_valid(raise_exception=True)
    plan = fee_estimate(request=DraftRequest.from_api(request.validated_data), now=timezone.now())
    return {
        "network": str(plan.asset.network),
        "currency": str(plan.asset.currency),
        "paymentMethod": str(plan.method),
        "amountSats": plan.amount_base_units,
        "amount": format_amount(plan.amount_base_units, plan.asset),
        "fiatCurrency": plan.fiat_currency,
        "fiatAmount": json_number(plan.fiat_amount),
        "quote": plan.quote.as_json() | {"nudgeBaseUnits": 0},
        "platformFee": plan.fee.as_json(fee_placement_estimate(plan=plan)),
    }

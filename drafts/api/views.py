from __future__ import annotations

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException
from rest_framework.response import Response

from config.api.pagination import page_of
from config.api.problems import Conflict, problem_body
from config.api.responses import resource_url
from drafts import services
from drafts.api.serializers import (
    BatchCreateDraftsRequestSerializer,
    BatchDraftItemSerializer,
    BatchDraftResultSerializer,
    CreateDraftRequestSerializer,
    DraftFeesResponseSerializer,
    DraftListQuerySerializer,
    DraftListResponseSerializer,
    DraftResponseSerializer,
    DraftStatusResponseSerializer,
    TxTemplateResponseSerializer,
)
from drafts.documents import draft_fees_json, draft_pdf, draft_tx_template
from drafts.idempotency import Outcome, Record, run_idempotently, validate_key
from drafts.planning import draft_plan
from drafts.presenters import draft_json, draft_status_json
from drafts.selectors import draft_get, draft_list

UUID_PATTERN = "[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER, description="Makes retries safe (24 h, per account)"
)


def create_draft_outcome(*, user, body, record: Record) -> Outcome:
    """Validate, price and write one draft; the shared path of single and batch creation."""
    request = CreateDraftRequestSerializer(data=body)
    request.is_valid(raise_exception=True)
    now = timezone.now()
    plan = draft_plan(request=request.validated_data, now=now)  # network I/O: before the transaction

    created: dict[str, Outcome] = {}

    def store(draft) -> None:  # inside the draft's transaction: the stored response commits with it
        created["outcome"] = Outcome(status=201, body=draft_json(draft))
        record(created["outcome"])

    services.draft_create(user=user, plan=plan, now=now, on_created=store)
    return created["outcome"]


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

    @extend_schema(
        summary="List drafts, newest first, with filters and paging",
        parameters=[DraftListQuerySerializer],
        responses=DraftListResponseSerializer,
    )
    def list(self, request):
        query = DraftListQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        page = page_of(draft_list(user=request.user, filters=params), page=params["page"], page_size=params["pageSize"])
        return Response(page.envelope([draft_json(d) for d in page.items]))

    @extend_schema(
        summary="Create a draft (exact amount or fiat-priced)",
        request=CreateDraftRequestSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: DraftResponseSerializer},
    )
    def create(self, request):
        key = request.headers.get("Idempotency-Key")
        if key is not None:
            validate_key(key)
        outcome = run_idempotently(
            user=request.user,
            key=key,
            body=request.data,
            work=lambda record: create_draft_outcome(user=request.user, body=request.data, record=record),
        )
        response = Response(outcome.body, status=outcome.status)
        if outcome.status == 201:
            response["Location"] = resource_url("draft-detail", pk=outcome.body["id"])
        if outcome.status >= 400:
            response.content_type = "application/problem+json"
        if outcome.replayed:
            response["Idempotent-Replayed"] = "true"
        return response

    @extend_schema(
        summary="Create up to 25 drafts in one call, one result per item",
        request=BatchCreateDraftsRequestSerializer,
        responses=BatchDraftResultSerializer(many=True),
    )
    @action(detail=False, methods=["post"])
    def batch(self, request):
        body = BatchCreateDraftsRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        results = []
        for index, raw in enumerate(body.validated_data["items"]):
            results.append(self._batch_item(request.user, index, raw))
        return Response(results)

    @staticmethod
    def _batch_item(user, index: int, raw: dict) -> dict:
        try:
            item = BatchDraftItemSerializer(data=raw)
            item.is_valid(raise_exception=True)
            key = item.validated_data.get("idempotencyKey")
            if key is not None:
                validate_key(key, field="idempotencyKey")
            draft_body = item.validated_data["draft"]
            outcome = run_idempotently(
                user=user,
                key=key,
                body=draft_body,
                work=lambda record: create_draft_outcome(user=user, body=draft_body, record=record),
            )
        except APIException as exc:
            outcome = Outcome(status=exc.status_code, body=problem_body(exc))
        if outcome.status >= 400:
            return {"index": index, "draft": None, "error": _error_text(outcome.body)}
        return {"index": index, "draft": outcome.body, "error": None}

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
        draft = draft_get(user=request.user, draft_id=pk)
        template = draft_tx_template(draft)
        if template is None:
            raise Conflict(
                "Transaction templates are for on-chain Bitcoin drafts; pay this draft with its paymentUri.",
                code="tx_template_not_applicable",
            )
        return Response(template)


def _error_text(problem: dict) -> str:
    fields = [e["field"] for e in problem.get("errors", []) if e.get("field")]
    where = f" ({', '.join(fields)})" if fields else ""
    return f"{problem['code']}: {problem['detail']}{where}"

"""The bodies of the drafts operations, shared by the REST views (drafts.api.views) and the MCP tools."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError

from accounts.models import User
from core.api.pagination import page_of
from core.api.problems import problem_from_validation
from core.problems import Conflict, Problem
from drafts.api.creation import create_draft_outcome
from drafts.api.serializers import (
    BatchCreateDraftsRequestSerializer,
    BatchDraftItemSerializer,
    DraftListQuerySerializer,
)
from drafts.documents import draft_tx_template
from drafts.idempotency import Outcome
from drafts.models import Draft
from drafts.presenters import draft_json
from drafts.selectors import draft_list


def draft_page_json(*, user: User, query: dict[str, Any]) -> dict[str, Any]:
    """GET /drafts: one page of the account's drafts for the (unvalidated) query parameters."""
    params = DraftListQuerySerializer(data=query)
    params.is_valid(raise_exception=True)
    filters = params.validated_data
    page = page_of(draft_list(user=user, filters=filters), filters, within=draft_list(user=user, filters={}))
    return page.envelope([draft_json(d) for d in page.items])


def draft_batch_json(*, user: User, body: Any) -> list[dict[str, Any]]:
    """POST /drafts/batch: one result per item, each created (or refused) on its own."""
    request = BatchCreateDraftsRequestSerializer(data=body)
    request.is_valid(raise_exception=True)
    return [_batch_item(user, index, raw) for index, raw in enumerate(request.validated_data["items"])]


def _batch_item(user: User, index: int, raw: dict[str, Any]) -> dict[str, Any]:
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


def tx_template_json(*, draft: Draft) -> dict[str, Any]:
    """GET /drafts/{id}/tx-template: a 409 for drafts that are not paid by an on-chain Bitcoin transaction."""
    template = draft_tx_template(draft)
    if template is None:
        raise Conflict(
            "Transaction templates are for on-chain Bitcoin drafts; pay this draft with its paymentUri.",
            code="tx_template_not_applicable",
        )
    return template


def _error_text(problem: dict[str, Any]) -> str:
    fields = [e["field"] for e in problem.get("errors", []) if e.get("field")]
    where = f" ({', '.join(fields)})" if fields else ""
    return f"{problem['code']}: {problem['detail']}{where}"


def _item_problem(item: BatchDraftItemSerializer) -> Problem:
    return problem_from_validation(ValidationError(item.errors))

"""The bodies of the unmatched-transfer operations, shared by the REST views (chainwatch.api.views)
and the MCP tools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from accounts.models import User
from chainwatch.api.serializers import AttachTransferRequestSerializer, TransferListQuerySerializer
from chainwatch.unmatched import transfer_attach, unmatched_json, unmatched_list
from core.api.pagination import page_of
from drafts.presenters import draft_json


def transfer_page_json(*, user: User, query: Mapping[str, Any]) -> dict[str, Any]:
    """GET /transfers: one page of the transfers that paid none of the account's drafts."""
    params = TransferListQuerySerializer(data=dict(query.items()))
    params.is_valid(raise_exception=True)
    filters = params.validated_data
    reports = unmatched_list(user=user, matched=filters.get("matched"))
    page = page_of(reports, filters, within=unmatched_list(user=user, matched=None))
    return page.envelope([unmatched_json(r) for r in page.items])


def transfer_attach_json(*, user: User, transfer_id: UUID | str, body: Any) -> dict[str, Any]:
    """POST /transfers/{id}/attach: the draft the transfer now pays."""
    data = AttachTransferRequestSerializer(data=body)
    data.is_valid(raise_exception=True)
    draft = transfer_attach(
        user=user,
        report_id=transfer_id,
        draft_id=data.validated_data["draftId"],
        accept_amount=data.validated_data["acceptAmount"],
    )
    return draft_json(draft)

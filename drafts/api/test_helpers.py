"""POST /api/v1/test-helpers/drafts/{id}/pay | expire | reorg: test keys only (drafts.simulation)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.authentication import account_of
from accounts.models import User
from core.api.serializers import StrictChoiceField, StrictIntegerField, StrictSerializer
from drafts.api.serializers import DraftResponseSerializer
from drafts.models import Draft
from drafts.presenters import draft_json
from drafts.selectors import draft_get
from drafts.simulation import (
    MAX_CONFIRMATIONS,
    Outcome,
    draft_expire_simulate,
    draft_payment_simulate,
    draft_reorg_simulate,
    require_test_mode,
)


class SimulatePaymentRequestSerializer(StrictSerializer):
    outcome = StrictChoiceField(
        choices=Outcome.choices,
        required=False,
        default=Outcome.EXACT,
        help_text="exact (default) | short | over (5% off: AmountMismatch) | split (two transactions) | "
        "twice (a second transfer the draft does not take) | late (expires first, then paid)",
    )
    confirmations = StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_CONFIRMATIONS,
        help_text="Depth of the paying transaction; default the draft's requiredConfirmations (Confirmed). "
        "0 leaves it Seen; call again with more to confirm it.",
    )


def _test_draft(*, user: User, draft_id: UUID | str) -> Draft:
    require_test_mode(user)
    return draft_get(user=user, draft_id=draft_id)


def simulate_payment_json(*, user: User, draft_id: UUID | str, body: Any) -> dict[str, Any]:
    """POST /test-helpers/drafts/{id}/pay; shared by REST and MCP."""
    draft = _test_draft(user=user, draft_id=draft_id)
    request = SimulatePaymentRequestSerializer(data=body)
    request.is_valid(raise_exception=True)
    outcome, depth = request.validated_data["outcome"], request.validated_data.get("confirmations")
    return draft_json(draft_payment_simulate(draft=draft, outcome=outcome, confirmations=depth))


def simulate_expiry_json(*, user: User, draft_id: UUID | str) -> dict[str, Any]:
    return draft_json(draft_expire_simulate(draft=_test_draft(user=user, draft_id=draft_id)))


def simulate_reorg_json(*, user: User, draft_id: UUID | str) -> dict[str, Any]:
    return draft_json(draft_reorg_simulate(draft=_test_draft(user=user, draft_id=draft_id)))


class TestHelperView(APIView):
    cost_classes = {"POST": "test-helper"}  # MCP's test_* tools spend it too (x-rate-limit-class)
    problem_statuses = {"POST": (403, 409)}


class SimulatePaymentView(TestHelperView):
    @extend_schema(
        summary="Test mode: pay a test draft as a watcher would see it (exact, short, over, split, twice, late)",
        request=SimulatePaymentRequestSerializer,
        responses=DraftResponseSerializer,
    )
    def post(self, request: Request, pk: str) -> Response:
        return Response(simulate_payment_json(user=account_of(request), draft_id=pk, body=request.data))


class SimulateExpiryView(TestHelperView):
    @extend_schema(
        summary="Test mode: expire a Pending test draft now", request=None, responses=DraftResponseSerializer
    )
    def post(self, request: Request, pk: str) -> Response:
        return Response(simulate_expiry_json(user=account_of(request), draft_id=pk))


class SimulateReorgView(TestHelperView):
    @extend_schema(
        summary="Test mode: the paying transaction of a Seen test draft leaves the chain (back to Pending)",
        request=None,
        responses=DraftResponseSerializer,
    )
    def post(self, request: Request, pk: str) -> Response:
        return Response(simulate_reorg_json(user=account_of(request), draft_id=pk))

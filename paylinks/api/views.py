"""Payment requests (owner, API key or session) and the checkout (anonymous payer, token
in the path). Thin: validate, call one service or selector, present."""

from __future__ import annotations

from django.conf import settings
from django.utils import translation
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.pagination import PLAIN_ARRAY_HEADERS
from core.api.responses import IDEMPOTENCY_HEADER, idempotency_key_of, outcome_response
from core.api.throttling import ApiRateThrottle
from core.routing import UUID_PATTERN
from paylinks import services
from paylinks.api.edge import payment_request_create_outcome, payment_request_page
from paylinks.api.serializers import (
    CheckoutReceiptSerializer,
    CheckoutResponseSerializer,
    CheckoutSelectionSerializer,
    CheckoutSelectSerializer,
    CheckoutStatusSerializer,
    CreatePaymentRequestSerializer,
    PaymentRequestListQuerySerializer,
    PaymentRequestResponseSerializer,
)
from paylinks.budget import payer_ident
from paylinks.presenters import checkout_json, checkout_selection_json, checkout_status_json, payment_request_json
from paylinks.selectors import payment_request_by_token, payment_request_get


class PaymentRequestViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN

    @extend_schema(
        summary="List payment requests, newest first (a plain array; X-Total-Count, X-Next-Cursor)",
        parameters=[PaymentRequestListQuerySerializer, *PLAIN_ARRAY_HEADERS],
        responses=PaymentRequestResponseSerializer(many=True),
    )
    def list(self, request):
        items, page = payment_request_page(user=request.user, query=request.query_params.dict())
        return Response(items, headers=page.headers())

    @extend_schema(
        summary="Create a payment request (pay link) priced in fiat, payable in any of its options",
        request=CreatePaymentRequestSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: PaymentRequestResponseSerializer},
    )
    def create(self, request):
        outcome = payment_request_create_outcome(
            user=request.user, body=request.data, idempotency_key=idempotency_key_of(request)
        )
        return outcome_response(outcome, url_name="payment-request-detail")

    @extend_schema(summary="Get a payment request", responses=PaymentRequestResponseSerializer)
    def retrieve(self, request, pk=None):
        return Response(payment_request_json(payment_request_get(user=request.user, payment_request_id=pk)))

    @extend_schema(
        summary="Cancel an Open payment request (and its pending draft)",
        request=None,
        responses=PaymentRequestResponseSerializer,
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        payment_request = payment_request_get(user=request.user, payment_request_id=pk)
        return Response(payment_request_json(services.payment_request_cancel(payment_request=payment_request)))


# --- Checkout (payer side) -------------------------------------------------------------


class CheckoutThrottle(ApiRateThrottle):
    """Per client IP, with its own budget (CHECKOUT_RATE_LIMITS): the payer has no key."""

    def ident_of(self, request) -> str:
        return payer_ident(request)


class CheckoutView(APIView):
    """Anonymous: the token in the path is the payer's only credential. No session is
    read, so a merchant testing their own link in a logged-in browser is a payer too."""

    authentication_classes: list = []
    throttle_classes = [CheckoutThrottle]

    @property
    def throttle_rates(self) -> dict[str, str]:
        return settings.CHECKOUT_RATE_LIMITS


TOKEN_PARAMETER = OpenApiParameter("token", str, OpenApiParameter.PATH, description="The pay link's token")


class CheckoutDetailView(CheckoutView):
    @extend_schema(
        summary="What the payer needs to choose how to pay (no owner data)",
        parameters=[TOKEN_PARAMETER],
        responses=CheckoutResponseSerializer,
        auth=[],
    )
    def get(self, request, token: str):
        return Response(checkout_json(payment_request_by_token(token=token)))


class CheckoutSelectView(CheckoutView):
    @extend_schema(
        summary="Choose an option: creates the draft (its rate locks now) or returns the current one",
        parameters=[TOKEN_PARAMETER],
        request=CheckoutSelectSerializer,
        responses=CheckoutSelectionSerializer,
        auth=[],
    )
    def post(self, request, token: str):
        payment_request_by_token(token=token)  # 404 before any work for an unknown token
        body = CheckoutSelectSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        draft = services.checkout_select(
            token=token,
            currency=body.validated_data["currency"],
            network=body.validated_data["network"],
            method=body.validated_data.get("method"),
            language=translation.get_language() or "",
        )
        return Response(checkout_selection_json(draft))


class CheckoutStatusView(CheckoutView):
    @extend_schema(
        summary="Status of the request and of the payer's draft (poll with back-off)",
        parameters=[TOKEN_PARAMETER],
        responses=CheckoutStatusSerializer,
        auth=[],
    )
    def get(self, request, token: str):
        payment_request = payment_request_by_token(token=token)
        return Response(checkout_status_json(payment_request))


class CheckoutReceiptView(CheckoutView):
    @extend_schema(
        summary="Ask for an emailed receipt, sent when the request is paid",
        parameters=[TOKEN_PARAMETER],
        request=CheckoutReceiptSerializer,
        responses=CheckoutStatusSerializer,
        auth=[],
    )
    def post(self, request, token: str):
        payment_request_by_token(token=token)
        body = CheckoutReceiptSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        payment_request = services.checkout_receipt_request(
            token=token, email=body.validated_data["email"], language=translation.get_language()
        )
        return Response(checkout_status_json(payment_request))

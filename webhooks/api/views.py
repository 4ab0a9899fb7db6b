from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import account_of
from core.api.pagination import PageQuerySerializer
from core.api.responses import IDEMPOTENCY_HEADER, idempotency_key_of, outcome_response
from core.routing import UUID_PATTERN
from webhooks.api.edge import (
    delivery_page_json,
    delivery_redeliver_json,
    event_json,
    event_page_json,
    event_redeliver_json,
    event_stream_json,
    webhook_create_outcome,
    webhook_delete_json,
    webhook_of,
    webhook_page_json,
    webhook_rotate_secret_json,
    webhook_test_json,
    webhook_update_json,
)
from webhooks.api.serializers import (
    CreateWebhookRequestSerializer,
    DeliveryListQuerySerializer,
    DeliveryPageSerializer,
    DeliverySerializer,
    EventListQuerySerializer,
    EventPageSerializer,
    EventRedeliveredSerializer,
    EventSerializer,
    EventStreamQuerySerializer,
    EventStreamSerializer,
    RedeliverEventRequestSerializer,
    RotateWebhookSecretRequestSerializer,
    UpdateWebhookRequestSerializer,
    WebhookCreatedSerializer,
    WebhookPageSerializer,
    WebhookSerializer,
)
from webhooks.models import Webhook


class WebhookViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN
    problem_statuses = {"test": (409,), "redeliver": (409,)}

    def _webhook(self, request: Request, pk: str | None) -> Webhook:
        return webhook_of(user=account_of(request), webhook_id=pk)

    @extend_schema(
        summary="List the account's webhook endpoints",
        parameters=[PageQuerySerializer],
        responses=WebhookPageSerializer,
    )
    def list(self, request: Request) -> Response:
        return Response(webhook_page_json(user=account_of(request), query=request.query_params))

    @extend_schema(
        summary="Register a webhook endpoint (the signing secret is shown once)",
        request=CreateWebhookRequestSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={200: WebhookCreatedSerializer},
    )
    def create(self, request: Request) -> Response:
        outcome = webhook_create_outcome(
            user=account_of(request), body=request.data, idempotency_key=idempotency_key_of(request)
        )
        return outcome_response(outcome, url_name="webhook-detail")

    @extend_schema(summary="Read a webhook endpoint", responses=WebhookSerializer)
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        return Response(WebhookSerializer(self._webhook(request, pk)).data)

    @extend_schema(
        summary="Change a webhook endpoint's URL or events, or disable or re-enable it",
        request=UpdateWebhookRequestSerializer,
        responses=WebhookSerializer,
    )
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        return Response(webhook_update_json(user=account_of(request), webhook_id=pk, body=request.data))

    @extend_schema(
        summary="Delete a webhook endpoint; answers with the deleted endpoint", responses={200: WebhookSerializer}
    )
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        return Response(webhook_delete_json(user=account_of(request), webhook_id=pk))

    @extend_schema(
        summary="Replace the signing secret (the new one is shown once); the old one keeps signing for an overlap",
        request=RotateWebhookSecretRequestSerializer,
        responses=WebhookCreatedSerializer,
    )
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request: Request, pk: str | None = None) -> Response:
        return Response(webhook_rotate_secret_json(user=account_of(request), webhook_id=pk, body=request.data))

    @extend_schema(summary="Send a test event to a webhook endpoint", request=None, responses=DeliverySerializer)
    @action(detail=True, methods=["post"])
    def test(self, request: Request, pk: str | None = None) -> Response:
        return Response(webhook_test_json(user=account_of(request), webhook_id=pk))

    @extend_schema(
        summary="List a webhook endpoint's deliveries and their attempts",
        parameters=[DeliveryListQuerySerializer],
        responses=DeliveryPageSerializer,
    )
    @action(detail=True, methods=["get"])
    def deliveries(self, request: Request, pk: str | None = None) -> Response:
        return Response(delivery_page_json(user=account_of(request), webhook_id=pk, query=request.query_params))

    @extend_schema(summary="Deliver an event again", request=None, responses=DeliverySerializer)
    @action(detail=True, methods=["post"], url_path=f"deliveries/(?P<deliveryId>{UUID_PATTERN})/redeliver")
    def redeliver(
        self,
        request: Request,
        pk: str | None = None,
        deliveryId: str | None = None,  # noqa: N803 - the path parameter, camelCase as every name
    ) -> Response:
        return Response(delivery_redeliver_json(user=account_of(request), webhook_id=pk, delivery_id=deliveryId))


class EventViewSet(viewsets.ViewSet):
    """The account's events in the key's mode: list, read, stream (long poll), send again."""

    lookup_value_regex = UUID_PATTERN
    problem_statuses = {"redeliver": (409,)}

    @extend_schema(
        summary="List the account's events (the key's mode), newest first",
        parameters=[EventListQuerySerializer],
        responses=EventPageSerializer,
    )
    def list(self, request: Request) -> Response:
        return Response(event_page_json(user=account_of(request), query=request.query_params.dict()))

    @extend_schema(summary="Read an event", responses=EventSerializer)
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        return Response(event_json(user=account_of(request), event_id=pk))

    @extend_schema(
        summary="The events after a cursor, oldest first; waits up to `wait` seconds for one (long poll)",
        description="What `manage.py listen` and docs/examples/listen.py read. Pass `next` as `startingAfter` "
        "in the next call. An event shows here about a second after it was recorded.",
        parameters=[EventStreamQuerySerializer],
        responses=EventStreamSerializer,
    )
    @action(detail=False, methods=["get"])
    def stream(self, request: Request) -> Response:
        return Response(event_stream_json(user=account_of(request), query=request.query_params.dict()))

    @extend_schema(
        summary="Send an event again, to one endpoint or to every endpoint that had it",
        request=RedeliverEventRequestSerializer,
        responses=EventRedeliveredSerializer,
    )
    @action(detail=True, methods=["post"])
    def redeliver(self, request: Request, pk: str | None = None) -> Response:
        return Response(event_redeliver_json(user=account_of(request), event_id=pk, body=request.data))

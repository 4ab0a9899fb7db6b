from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core.api.pagination import PageQuerySerializer, paginate
from core.routing import UUID_PATTERN
from webhooks import endpoints
from webhooks.api.edge import (
    webhook_create_json,
    webhook_delete_json,
    webhook_of,
    webhook_page_json,
    webhook_test_json,
)
from webhooks.api.serializers import (
    CreateWebhookRequestSerializer,
    DeliveryPageSerializer,
    DeliverySerializer,
    RotateWebhookSecretRequestSerializer,
    UpdateWebhookRequestSerializer,
    WebhookCreatedSerializer,
    WebhookPageSerializer,
    WebhookSerializer,
)
from webhooks.models import Delivery
from webhooks.selectors import delivery_list


class WebhookViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN
    problem_statuses = {"test": (409,), "redeliver": (409,)}

    def _webhook(self, request, pk):
        return webhook_of(user=request.user, webhook_id=pk)

    @extend_schema(
        summary="List the account's webhook endpoints",
        parameters=[PageQuerySerializer],
        responses=WebhookPageSerializer,
    )
    def list(self, request):
        return Response(webhook_page_json(user=request.user, query=request.query_params))

    @extend_schema(
        summary="Register a webhook endpoint (the signing secret is shown once)",
        request=CreateWebhookRequestSerializer,
        responses={200: WebhookCreatedSerializer},
    )
    def create(self, request):
        return Response(webhook_create_json(user=request.user, body=request.data))

    @extend_schema(summary="Read a webhook endpoint", responses=WebhookSerializer)
    def retrieve(self, request, pk=None):
        return Response(WebhookSerializer(self._webhook(request, pk)).data)

    @extend_schema(
        summary="Change a webhook endpoint's URL or events, or disable or re-enable it",
        request=UpdateWebhookRequestSerializer,
        responses=WebhookSerializer,
    )
    def partial_update(self, request, pk=None):
        webhook = self._webhook(request, pk)
        body = UpdateWebhookRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        events = body.validated_data.get("events")
        webhook = endpoints.webhook_update(
            webhook=webhook,
            url=body.validated_data.get("url"),
            active=body.validated_data.get("active"),
            events=(events or []) if "events" in body.validated_data else None,
        )
        return Response(WebhookSerializer(webhook).data)

    @extend_schema(
        summary="Delete a webhook endpoint; answers with the deleted endpoint", responses={200: WebhookSerializer}
    )
    def destroy(self, request, pk=None):
        return Response(webhook_delete_json(user=request.user, webhook_id=pk))

    @extend_schema(
        summary="Replace the signing secret (the new one is shown once); the old one keeps signing for an overlap",
        request=RotateWebhookSecretRequestSerializer,
        responses=WebhookCreatedSerializer,
    )
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request, pk=None):
        webhook = self._webhook(request, pk)
        body = RotateWebhookSecretRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        webhook = endpoints.webhook_rotate_secret(
            webhook=webhook, overlap_hours=body.validated_data.get("overlapHours")
        )
        return Response(WebhookCreatedSerializer(webhook).data)

    @extend_schema(summary="Send a test event to a webhook endpoint", request=None, responses=DeliverySerializer)
    @action(detail=True, methods=["post"])
    def test(self, request, pk=None):
        return Response(webhook_test_json(user=request.user, webhook_id=pk))

    @extend_schema(
        summary="List a webhook endpoint's deliveries and their attempts",
        parameters=[PageQuerySerializer],
        responses=DeliveryPageSerializer,
    )
    @action(detail=True, methods=["get"])
    def deliveries(self, request, pk=None):
        page = paginate(delivery_list(webhook=self._webhook(request, pk)), request.query_params)
        return Response(page.envelope(DeliverySerializer(page.items, many=True).data))

    @extend_schema(summary="Deliver an event again", request=None, responses=DeliverySerializer)
    @action(detail=True, methods=["post"], url_path=f"deliveries/(?P<delivery_id>{UUID_PATTERN})/redeliver")
    def redeliver(self, request, pk=None, delivery_id=None):
        delivery = get_object_or_404(Delivery, pk=delivery_id, webhook=self._webhook(request, pk))
        delivery = endpoints.delivery_redeliver(delivery=delivery)
        delivery = delivery_list(webhook=delivery.webhook).get(pk=delivery.pk)
        return Response(DeliverySerializer(delivery).data)

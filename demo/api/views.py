"""The demo: anonymous, test networks only, limited per IP and capped in open drafts."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.responses import created_response, resource_url
from core.api.throttling import PerIpThrottle
from demo.api.serializers import (
    CreateDemoDraftRequestSerializer,
    DemoConfigResponseSerializer,
    DemoDraftResponseSerializer,
)
from demo.presenters import demo_config_json, demo_draft_json
from demo.selectors import demo_draft_get, demo_networks
from demo.services import demo_draft_create


class DemoDraftThrottle(PerIpThrottle):
    name = "demo"

    def rate(self) -> str:
        return settings.DEMO_RATE_LIMIT


class DemoView(APIView):
    # Anyone, credentials or not: a key or session sent along is ignored rather than checked.
    authentication_classes: list = []


class DemoConfigView(DemoView):
    @extend_schema(summary="What the demo offers: test networks and currencies", responses=DemoConfigResponseSerializer)
    def get(self, request):
        return Response(demo_config_json(demo_networks()))


class DemoDraftsView(DemoView):
    throttle_classes = [*APIView.throttle_classes, DemoDraftThrottle]

    @extend_schema(
        summary="Open a demo draft on a test network (no account, no real funds)",
        request=CreateDemoDraftRequestSerializer,
        responses={201: DemoDraftResponseSerializer},
    )
    def post(self, request):
        body = CreateDemoDraftRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        draft = demo_draft_create(network=body.validated_data["network"], currency=body.validated_data["currency"])
        return created_response(demo_draft_json(draft), location=resource_url("demo-draft-detail", pk=draft.id))


class DemoDraftDetailView(DemoView):
    @extend_schema(summary="A demo draft's status, payment and confirmations", responses=DemoDraftResponseSerializer)
    def get(self, request, pk):
        return Response(demo_draft_json(demo_draft_get(draft_id=pk)))

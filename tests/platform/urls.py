"""A URLconf for exercising the API machinery with views that exist only in tests. Their
rules extend the authorization table (AUTHORIZATION_TABLE in tests/settings.py)."""

from django.urls import include, path
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.serializers import StrictSerializer


class EchoRequest(StrictSerializer):
    amountSats = serializers.IntegerField(min_value=1)
    memo = serializers.CharField(max_length=10, required=False)


class ScopedView(APIView):
    def get(self, request):
        return Response({"ok": True})

    def post(self, request):
        body = EchoRequest(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(body.validated_data)


class PublicView(APIView):
    authentication_classes: list = []

    def get(self, request):
        return Response({"ok": True})


class CrashingView(APIView):
    def get(self, request):
        raise RuntimeError("boom: a bug, not bad input")


urlpatterns = [
    path("api/v1/test/scoped", ScopedView.as_view(), name="test-scoped"),
    path("api/v1/test/crash", CrashingView.as_view(), name="test-crash"),
    path("api/v1/test/public", PublicView.as_view(), name="test-public"),
    path("", include("config.urls")),
]

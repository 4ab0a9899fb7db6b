"""A URLconf for exercising the API machinery with views that exist only in tests."""

from django.urls import include, path
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.serializers import StrictSerializer


class EchoRequest(StrictSerializer):
    amountSats = serializers.IntegerField(min_value=1)
    memo = serializers.CharField(max_length=10, required=False)


class ScopedView(APIView):
    required_scopes = {"GET": "drafts:read", "POST": "drafts:write"}

    def get(self, request):
        return Response({"ok": True})

    def post(self, request):
        body = EchoRequest(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(body.validated_data)


class PublicView(APIView):
    public = True
    authentication_classes: list = []

    def get(self, request):
        return Response({"ok": True})


class CrashingView(APIView):
    def get(self, request):
        raise RuntimeError("boom: a bug, not bad input")


urlpatterns = [
    path("api/v1/test/scoped", ScopedView.as_view()),
    path("api/v1/test/crash", CrashingView.as_view()),
    path("api/v1/test/public", PublicView.as_view()),
    path("", include("config.urls")),
]

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.throttling import PerIpThrottle
from suggestions.api.serializers import SuggestionRequestSerializer, SuggestionResponseSerializer
from suggestions.services import suggestion_create


class SuggestionThrottle(PerIpThrottle):
    name = "suggestions"

    def rate(self) -> str:
        return settings.SUGGESTIONS_RATE_LIMIT


class SuggestionView(APIView):
    """Anyone may send one, signed in or not; limited per client IP."""

    throttle_classes = [*APIView.throttle_classes, SuggestionThrottle]

    @extend_schema(
        summary="Send a suggestion to the operator (anonymous or signed in)",
        request=SuggestionRequestSerializer,
        responses={200: SuggestionResponseSerializer},
    )
    def post(self, request):
        body = SuggestionRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        suggestion = suggestion_create(
            text=body.validated_data["text"], email=body.validated_data.get("email"), user=request.user
        )
        return Response(
            SuggestionResponseSerializer(
                {"id": suggestion.id, "received": True, "created_at": suggestion.created_at}
            ).data
        )

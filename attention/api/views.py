from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.authentication import account_of
from accounts.models import ApiKey
from attention.api.edge import attention_body
from attention.api.serializers import AttentionSerializer


class AttentionView(APIView):
    @extend_schema(
        summary="What waits for you: payments off their amount, confirming or reverted, unmatched transfers, "
        "claimed refunds, failing webhooks, expiring keys",
        description=(
            "Needs drafts:read (payments and transfers); refunds need refunds:read too, webhook endpoints and "
            "API keys webhooks:manage: a key sees the kinds its scopes read. In the key's mode."
        ),
        responses=AttentionSerializer,
    )
    def get(self, request: Request) -> Response:
        api_key = request.auth if isinstance(request.auth, ApiKey) else None
        return Response(attention_body(user=account_of(request), api_key=api_key))

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.response import Response

from accounts.api.serializers import (
    ApiKeyCreatedSerializer,
    ApiKeySerializer,
    CreateApiKeyRequestSerializer,
)
from accounts.selectors import api_key_list
from accounts.services import api_key_issue, api_key_revoke
from accounts.sessions import client_of
from core.api.pagination import PageQuerySerializer, paged_envelope_serializer, paginate
from core.api.responses import IDEMPOTENCY_HEADER, idempotency_key_of, outcome_response
from core.routing import UUID_PATTERN
from drafts.idempotency import create_once


class ApiKeyViewSet(viewsets.ViewSet):
    """API keys are managed from a logged-in session only: a key cannot mint keys."""

    lookup_value_regex = UUID_PATTERN
    problem_statuses = {"create": (403, 409)}  # step_up_required, api_key_limit_reached

    @extend_schema(
        summary="List the account's active API keys",
        parameters=[PageQuerySerializer],
        responses=paged_envelope_serializer("ApiKeyList", ApiKeySerializer),
    )
    def list(self, request):
        page = paginate(api_key_list(user=request.user), request.query_params)
        return Response(page.envelope(ApiKeySerializer(page.items, many=True).data))

    @extend_schema(
        summary="Create an API key (the key is shown once; needs step-up, and the owner is emailed)",
        request=CreateApiKeyRequestSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={200: ApiKeyCreatedSerializer},
    )
    def create(self, request):
        def issue() -> dict:
            body = CreateApiKeyRequestSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            issued = api_key_issue(
                request,
                user=request.user,
                client=client_of(request),
                name=body.validated_data.get("name") or "",
                scopes=body.validated_data["scopes"],
                expires_at=body.validated_data.get("expiresAt"),
                livemode=not body.validated_data["testMode"],
            )
            return ApiKeySerializer(issued.api_key).data | {"key": issued.key}

        # The answer holds the key (shown once): kept encrypted under the Idempotency-Key.
        outcome = create_once(
            user=request.user,
            key=idempotency_key_of(request),
            operation="apiKey",
            body=request.data,
            make=issue,
            secret=True,
        )
        return outcome_response(outcome, url_name="api-key-detail")

    @extend_schema(summary="Revoke an API key; answers with the revoked key", responses={200: ApiKeySerializer})
    def destroy(self, request, pk=None):
        api_key = get_object_or_404(api_key_list(user=request.user), pk=pk)
        return Response(ApiKeySerializer(api_key_revoke(api_key=api_key)).data)

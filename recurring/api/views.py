from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core.api.pagination import PageQuerySerializer, paged_envelope_serializer
from core.api.responses import IDEMPOTENCY_HEADER, idempotency_key_of, outcome_response
from core.routing import UUID_PATTERN
from recurring import services
from recurring.api.edge import (
    recurring_template_create_outcome,
    recurring_template_delete_json,
    recurring_template_page_json,
)
from recurring.api.serializers import CreateRecurringTemplateRequestSerializer, RecurringTemplateSerializer
from recurring.presenters import recurring_template_json
from recurring.selectors import recurring_template_get


class RecurringTemplateViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN

    @extend_schema(
        summary="List recurring templates, newest first",
        parameters=[PageQuerySerializer],
        responses=paged_envelope_serializer("RecurringTemplateList", RecurringTemplateSerializer),
    )
    def list(self, request):
        return Response(recurring_template_page_json(user=request.user, query=request.query_params))

    @extend_schema(
        summary="Create a template that makes a draft every day, week or month",
        request=CreateRecurringTemplateRequestSerializer,
        parameters=[IDEMPOTENCY_HEADER],
        responses={200: RecurringTemplateSerializer},
    )
    def create(self, request):
        outcome = recurring_template_create_outcome(
            user=request.user, body=request.data, idempotency_key=idempotency_key_of(request)
        )
        return outcome_response(outcome, url_name="recurring-template-detail")

    @extend_schema(summary="Read a recurring template", responses=RecurringTemplateSerializer)
    def retrieve(self, request, pk=None):
        return Response(recurring_template_json(recurring_template_get(user=request.user, template_id=pk)))

    @extend_schema(
        summary="Pause a template: no runs until resumed", request=None, responses=RecurringTemplateSerializer
    )
    @action(detail=True, methods=["post"])
    def pause(self, request, pk=None):
        template = services.recurring_template_pause(template=recurring_template_get(user=request.user, template_id=pk))
        return Response(recurring_template_json(template))

    @extend_schema(
        summary="Resume a template from its next run time (the paused period is not made up)",
        request=None,
        responses=RecurringTemplateSerializer,
    )
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        template = services.recurring_template_resume(
            template=recurring_template_get(user=request.user, template_id=pk)
        )
        return Response(recurring_template_json(template))

    @extend_schema(
        summary="Delete a template (its drafts stay); answers with the deleted template",
        responses={200: RecurringTemplateSerializer},
    )
    def destroy(self, request, pk=None):
        return Response(recurring_template_delete_json(user=request.user, template_id=pk))

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.api.serializers import AuditEntrySerializer, AuditLogQuerySerializer
from audit.selectors import audit_entries, audit_entry_json
from core.api.pagination import page_of, paged_envelope_serializer
from core.api.problems import validated


class AuditLogView(APIView):
    @extend_schema(
        summary="The organization's audit log, newest first (a session of an owner or admin)",
        parameters=[AuditLogQuerySerializer],
        responses=paged_envelope_serializer("AuditLog", AuditEntrySerializer),
    )
    def get(self, request):
        wanted = validated(AuditLogQuerySerializer, request.query_params.dict())
        entries = audit_entries(
            organization=request.user,
            action=wanted.get("action"),
            since=wanted.get("since"),
            until=wanted.get("until"),
        )
        page = page_of(entries, wanted, within=audit_entries(organization=request.user))
        return Response(page.envelope([audit_entry_json(entry) for entry in page.items]))

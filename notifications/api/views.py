from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from notifications import services
from notifications.api.serializers import (
    NotificationPreferenceSerializer,
    UpdateNotificationPreferenceRequestSerializer,
)
from notifications.selectors import notification_preference_get


class NotificationPreferenceView(APIView):
    @extend_schema(
        summary="Read the account's email notification preference", responses=NotificationPreferenceSerializer
    )
    def get(self, request):
        return Response(NotificationPreferenceSerializer(notification_preference_get(user=request.user)).data)

    @extend_schema(
        summary="Turn email notifications about drafts, or the daily attention digest, on or off",
        request=UpdateNotificationPreferenceRequestSerializer,
        responses=NotificationPreferenceSerializer,
    )
    def patch(self, request):
        body = UpdateNotificationPreferenceRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        preference = services.notification_preference_update(
            user=request.user,
            email_enabled=body.validated_data.get("emailEnabled"),
            attention_digest=body.validated_data.get("attentionDigest"),
        )
        return Response(NotificationPreferenceSerializer(preference).data)

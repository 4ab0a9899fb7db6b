from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from notifications import services
from notifications.api.serializers import (
    NotificationPreferenceSerializer,
    UpdateNotificationPreferenceRequestSerializer,
)
from notifications.selectors import notification_email_enabled


class NotificationPreferenceView(APIView):
    @extend_schema(
        summary="Read the account's email notification preference", responses=NotificationPreferenceSerializer
    )
    def get(self, request):
        return Response({"emailEnabled": notification_email_enabled(user=request.user)})

    @extend_schema(
        summary="Turn email notifications about drafts on or off",
        request=UpdateNotificationPreferenceRequestSerializer,
        responses=NotificationPreferenceSerializer,
    )
    def patch(self, request):
        body = UpdateNotificationPreferenceRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        preference = services.notification_preference_update(
            user=request.user, email_enabled=body.validated_data["emailEnabled"]
        )
        return Response(NotificationPreferenceSerializer(preference).data)

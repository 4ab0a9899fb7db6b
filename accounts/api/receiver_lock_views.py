"""GET/PUT /api/v1/account/receiver-lock: the receiving-address lock (accounts.receiver_lock,
docs/accounts.md). A signed-in session only: an API key gets 403 session_required. Turning it
off needs step-up (403 step_up_required) and takes effect after RECEIVER_LOCK_DELAY_HOURS."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.receiver_lock import ReceiverLock, receiver_lock_get, receiver_lock_set
from accounts.sessions import client_of
from core.api.serializers import StrictBooleanField, StrictSerializer
from core.wire import json_datetime

TAG = ["account"]


class ReceiverLockSerializer(serializers.Serializer):
    enabled = serializers.BooleanField(
        help_text="On: drafts, pay links and recurring templates that API keys or MCP create may pay only "
        "Receiving addresses of the address book past their waiting time (403 receiver_not_allowed)"
    )
    offAt = serializers.DateTimeField(
        allow_null=True, help_text="A pending turn-off: the lock stays on until this time"
    )
    delayHours = serializers.IntegerField(
        help_text="The waiting time of a new address, and of turning the lock off (RECEIVER_LOCK_DELAY_HOURS)"
    )


class ReceiverLockUpdateSerializer(StrictSerializer):
    enabled = StrictBooleanField(help_text="true: on at once; false: off after the waiting time (needs step-up)")


def _json(lock: ReceiverLock) -> dict:
    return {
        "enabled": lock.enabled,
        "offAt": json_datetime(lock.off_at) if lock.off_at else None,
        "delayHours": lock.delay_hours,
    }


class ReceiverLockView(APIView):
    problem_statuses = {"PUT": [403]}

    @extend_schema(tags=TAG, summary="The receiving-address lock", responses=ReceiverLockSerializer)
    def get(self, request):
        return Response(_json(receiver_lock_get(user=request.user)))

    @extend_schema(
        tags=TAG,
        summary="Turn the receiving-address lock on (at once) or off (step-up; after the waiting time)",
        request=ReceiverLockUpdateSerializer,
        responses=ReceiverLockSerializer,
    )
    def put(self, request):
        body = ReceiverLockUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        lock = receiver_lock_set(
            request, user=request.user, enabled=body.validated_data["enabled"], client=client_of(request)
        )
        return Response(_json(lock))

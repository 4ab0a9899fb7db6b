from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from fees.api.serializers import FeeScheduleSerializer
from fees.calculator import fee_schedule


class FeeScheduleView(APIView):
    required_scopes = {"GET": "fees:read"}

    @extend_schema(summary="The platform fee schedule (tiers, limits, dust rule)", responses=FeeScheduleSerializer)
    def get(self, request):
        return Response(fee_schedule())

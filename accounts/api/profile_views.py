"""GET/PATCH /api/v1/account/profile and PUT/DELETE /api/v1/account/profile/logo: what payers
see of the account and how it reads amounts and times (docs/decisions.md, "Merchant profile").

Reading needs any key of the account; changing it needs a session or a key with
paylinks:write (the profile is what every pay link shows)."""

from __future__ import annotations

import base64
import binascii

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.profiles import merchant_profile_get, merchant_profile_json, merchant_profile_update
from core.api.serializers import StrictSerializer
from core.problems import Problem

TAG = ["account"]


class MerchantProfileSerializer(serializers.Serializer):
    displayName = serializers.CharField(help_text="The name payers see; empty falls back to the deployment's label")
    logoUrl = serializers.URLField(allow_null=True, help_text="Public URL of the re-encoded PNG logo")
    supportEmail = serializers.EmailField(allow_null=True)
    supportUrl = serializers.URLField(allow_null=True)
    displayCurrency = serializers.CharField(help_text="ISO 4217 code the dashboard totals are shown in")
    timeZone = serializers.CharField(help_text="IANA time zone name, e.g. Europe/Berlin")
    language = serializers.CharField(help_text="Language of the dashboard, emails and CSV headers")


class MerchantProfilePatchSerializer(StrictSerializer):
    """Every field optional; an empty string (or null) clears the optional ones. Values are
    checked by the profile service, so a Problem names the field."""

    displayName = serializers.CharField(allow_blank=True, allow_null=True, required=False, trim_whitespace=False)
    supportEmail = serializers.CharField(allow_blank=True, allow_null=True, required=False, trim_whitespace=False)
    supportUrl = serializers.CharField(allow_blank=True, allow_null=True, required=False, trim_whitespace=False)
    displayCurrency = serializers.CharField(required=False, trim_whitespace=False)
    timeZone = serializers.CharField(required=False, trim_whitespace=False)
    language = serializers.CharField(required=False, trim_whitespace=False)


_MODEL_NAMES = {
    "displayName": "display_name",
    "supportEmail": "support_email",
    "supportUrl": "support_url",
    "displayCurrency": "display_currency",
    "timeZone": "time_zone",
    "language": "language",
}


class LogoUploadSerializer(StrictSerializer):
    imageBase64 = serializers.CharField(
        trim_whitespace=False,
        help_text="The image file (PNG, JPEG, WebP or GIF), base64-encoded; the request body is capped at 256 KB",
    )


def _logo_bytes(request) -> bytes:
    body = LogoUploadSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    try:
        return base64.b64decode(body.validated_data["imageBase64"], validate=True)
    except (binascii.Error, ValueError):
        raise Problem("imageBase64 is not valid base64.", code="invalid", field="imageBase64") from None


def _body(request, profile) -> Response:
    return Response(merchant_profile_json(profile, base_url=settings.BASE_URL))


class MerchantProfileView(APIView):
    @extend_schema(tags=TAG, summary="The merchant profile payers see", responses=MerchantProfileSerializer)
    def get(self, request):
        return _body(request, merchant_profile_get(user=request.user))

    @extend_schema(
        tags=TAG,
        summary="Change the merchant profile (only the fields sent)",
        request=MerchantProfilePatchSerializer,
        responses=MerchantProfileSerializer,
    )
    def patch(self, request):
        body = MerchantProfilePatchSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        changes = {_MODEL_NAMES[k]: ("" if v is None else v) for k, v in body.validated_data.items()}
        return _body(request, merchant_profile_update(user=request.user, changes=changes))


class MerchantLogoView(APIView):
    @extend_schema(
        tags=TAG,
        summary="Upload the logo (PNG, JPEG, WebP or GIF, base64 in JSON; re-encoded as a PNG of at most 256 px)",
        request=LogoUploadSerializer,
        responses=MerchantProfileSerializer,
    )
    def put(self, request):
        return _body(request, merchant_profile_update(user=request.user, changes={}, logo=_logo_bytes(request)))

    @extend_schema(tags=TAG, summary="Remove the logo", request=None, responses={200: MerchantProfileSerializer})
    def delete(self, request):
        return _body(request, merchant_profile_update(user=request.user, changes={}, logo=None))

from __future__ import annotations

from rest_framework import serializers

from payments.rates import CRYPTO_ASSETS


class RatesQuerySerializer(serializers.Serializer):
    # allow_blank: an empty ?ccy= is an unknown code (400), not "use the default".
    ccy = serializers.CharField(
        required=False, default="USD", allow_blank=True, max_length=10, help_text="ISO 4217 fiat code"
    )
    asset = serializers.CharField(
        required=False, allow_blank=True, max_length=10, help_text=f"One of {', '.join(CRYPTO_ASSETS)}"
    )


class RateSerializer(serializers.Serializer):
    asset = serializers.ChoiceField(choices=CRYPTO_ASSETS)
    rate = serializers.FloatField(help_text="Units of ccy per 1 whole unit of the asset")
    source = serializers.CharField()
    fetchedAt = serializers.DateTimeField(help_text="When the service fetched the rate")
    asOf = serializers.DateTimeField(allow_null=True, help_text="The provider's own timestamp of the data")


class RatesResponseSerializer(serializers.Serializer):
    ccy = serializers.CharField()
    source = serializers.CharField()
    fetchedAt = serializers.DateTimeField()
    rates = RateSerializer(many=True)

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from payments.rates import CRYPTO_ASSETS


class RatesQuerySerializer(serializers.Serializer[Any]):
    # allow_blank: an empty ?ccy= is an unknown code (400), not "use the default".
    ccy = serializers.CharField(
        required=False, default="USD", allow_blank=True, max_length=10, help_text="ISO 4217 fiat code"
    )
    asset = serializers.CharField(
        required=False, allow_blank=True, max_length=10, help_text=f"One of {', '.join(CRYPTO_ASSETS)}"
    )


class SourcePriceSerializer(serializers.Serializer[Any]):
    leg = serializers.ChoiceField(choices=["crypto", "fx"], help_text="crypto: USD per 1 unit; fx: ccy per 1 USD")
    source = serializers.CharField()  # type: ignore[assignment]  # a field named "source": the stubs read it as Field.source
    rate = serializers.FloatField(allow_null=True, help_text="This source's price")
    used = serializers.BooleanField(help_text="Whether it counted in the median")
    dropped = serializers.ChoiceField(
        choices=["outlier", "stale", "disagree"], allow_null=True, help_text="Why the combination left it out"
    )


class RateSerializer(serializers.Serializer[Any]):
    asset = serializers.ChoiceField(choices=CRYPTO_ASSETS)
    rate = serializers.FloatField(help_text="Units of ccy per 1 whole unit of the asset")
    source = serializers.CharField()  # type: ignore[assignment]  # a field named "source": the stubs read it as Field.source
    live = serializers.BooleanField(help_text="False when the bundled, dated table priced it (RATES_BUNDLED_ALLOWED)")
    fetchedAt = serializers.DateTimeField(help_text="When the service fetched the rate")
    asOf = serializers.DateTimeField(allow_null=True, help_text="The provider's own timestamp of the data")
    ageSeconds = serializers.IntegerField(help_text="Seconds since asOf (or fetchedAt)")
    agreeing = serializers.IntegerField(help_text="Sources that agreed on it (the fewer of the two legs; 0: bundled)")
    sources = SourcePriceSerializer(many=True)


class RatesResponseSerializer(serializers.Serializer[Any]):
    ccy = serializers.CharField()
    source = serializers.CharField()  # type: ignore[assignment]  # a field named "source": the stubs read it as Field.source
    live = serializers.BooleanField(help_text="False when any rate below is not live")
    fetchedAt = serializers.DateTimeField()
    rates = RateSerializer(many=True)

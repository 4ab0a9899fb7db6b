"""Create and read one draft: the floor of the same work the project's drafts API does."""

import re
from decimal import Decimal

from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from bench.bare.models import Draft

EVM_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")


class CreateDraftSerializer(serializers.Serializer):
    network = serializers.ChoiceField(choices=["Base", "Ethereum"])
    currency = serializers.ChoiceField(choices=["USDC", "USDT", "EURC"])
    receiverAddress = serializers.RegexField(EVM_ADDRESS)  # noqa: N815 (wire name)
    fiatCurrency = serializers.ChoiceField(choices=["USD", "EUR"])  # noqa: N815
    fiatAmount = serializers.DecimalField(max_digits=20, decimal_places=8, min_value=Decimal("0.01"))  # noqa: N815
    memo = serializers.CharField(max_length=500, required=False, default="")


def draft_json(draft: Draft) -> dict:
    return {
        "id": str(draft.id),
        "network": draft.network,
        "currency": draft.currency,
        "receiverAddress": draft.receiver_address,
        "fiatCurrency": draft.fiat_currency,
        "fiatAmount": str(draft.fiat_amount),
        "amountSats": draft.amount_base_units,
        "memo": draft.memo,
        "status": draft.status,
        "createdAt": draft.created_at.isoformat().replace("+00:00", "Z"),
    }


class DraftsView(APIView):
    def post(self, request):
        body = CreateDraftSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        draft = Draft.objects.create(
            key=request.auth,
            network=data["network"],
            currency=data["currency"],
            receiver_address=data["receiverAddress"],
            fiat_currency=data["fiatCurrency"],
            fiat_amount=data["fiatAmount"],
            amount_base_units=int(data["fiatAmount"] * 1_000_000),
            memo=data["memo"],
        )
        return Response(draft_json(draft), status=201, headers={"Location": f"/api/v1/drafts/{draft.id}"})


class DraftView(APIView):
    def get(self, request, pk):
        draft = Draft.objects.filter(id=pk, key=request.auth).first()
        if draft is None:
            raise exceptions.NotFound()
        return Response(draft_json(draft))

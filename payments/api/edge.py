"""The body of the rates operation, shared by the REST view (payments.api.views) and the MCP tools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from payments.api.serializers import RatesQuerySerializer
from payments.selectors import rates_list


def rates_json(*, query: Mapping[str, Any]) -> dict[str, Any]:
    """GET /rates for the (unvalidated) query parameters; shared by REST and MCP."""
    params = RatesQuerySerializer(data=query)
    params.is_valid(raise_exception=True)
    return rates_list(ccy=params.validated_data["ccy"], asset=params.validated_data.get("asset"))

from __future__ import annotations

import pytest
from django.test import override_settings

from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES


@pytest.fixture(autouse=True)
def _operator_settings():
    with override_settings(
        PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES, API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"}
    ):
        yield


def usdc_draft(**overrides) -> dict:
    """A fiat-priced USDC draft on Base: SingleOutput, so its fee accrues (and can be blocked)."""
    return {
        "network": "Base",
        "currency": "USDC",
        "receiverAddress": ADDRESSES["Base"],
        "fiatCurrency": "EUR",
        "fiatAmount": 49.5,
    } | overrides


def template_body(**overrides) -> dict:
    return {
        "name": "Rent",
        "interval": "Monthly",
        "firstRunAt": "2027-01-31T09:00:00Z",
        "draft": usdc_draft(),
    } | overrides

"""The Solana Pay transaction request URL of a draft (served by drafts/api/solana_pay.py, built
by chainwatch.solana_pay: it asks the Solana node for a blockhash)."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

from drafts.models import Draft
from payments.enums import Method


def transaction_request_url(draft: Draft) -> str | None:
    """`solana:https://...` for an on-chain Solana draft, else None."""
    if draft.method == Method.LIGHTNING or not draft.solana_reference:
        return None
    path = reverse("solana-pay-transaction-request", kwargs={"pk": draft.id})
    return f"solana:{settings.BASE_URL}{path}"

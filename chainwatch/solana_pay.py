"""A draft's Solana Pay transaction request (the payer-facing endpoint's service).

GET answers the label and icon a wallet shows; POST with the payer's account answers the
unsigned transaction (payments.solana_pay) paying exactly the draft, with its reference key,
on a recent blockhash the configured Solana RPC endpoint gives now (503 when it does not).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.conf import settings
from solders.pubkey import Pubkey

from chainwatch.networks import endpoints
from chainwatch.solana import SolanaClient
from chainwatch.transport import ChainError
from core.problems import Conflict, NotFound, Problem, ServiceUnavailable
from drafts.enums import DraftStatus
from drafts.models import Draft
from drafts.solana_pay import transaction_request_url
from payments.registry import format_amount, get_asset
from payments.solana_pay import transfer_transaction


def _draft(draft_id: UUID) -> Draft:
    draft = Draft.objects.filter(id=draft_id).first()
    if draft is None or transaction_request_url(draft) is None:
        raise NotFound("No Solana draft has this id.")
    return draft


def _label() -> str:
    return settings.PAYMENT_URI_LABEL or settings.BASE_URL.split("://", 1)[-1]


def transaction_request_label(*, draft_id: UUID) -> dict[str, str]:
    _draft(draft_id)
    return {"label": _label(), "icon": f"{settings.BASE_URL}/static/paylinks/favicon.svg"}


def _account(value: Any) -> str:
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        return str(Pubkey.from_string(value))
    except ValueError:
        raise Problem(
            "account must be a base58 Solana public key.",
            code="validation_error",
            errors=[{"field": "account", "code": "invalid", "message": "Not a base58 Solana public key."}],
        ) from None


def transaction_request(*, draft_id: UUID, account: Any) -> dict[str, str]:
    """The transaction paying the draft from `account` and the message the wallet shows."""
    payer = _account(account)
    draft = _draft(draft_id)
    if draft.status != DraftStatus.PENDING:
        raise Conflict(f"The draft is {draft.status}, not Pending: it takes no payment.", code="invalid_state")
    asset = get_asset(draft.currency, draft.network)
    rpc_url = endpoints(draft.network).rpc_url
    try:
        if not rpc_url:
            raise ChainError(f"no RPC_URL for {draft.network}")
        blockhash = SolanaClient(rpc_url).latest_blockhash()
    except (ChainError, KeyError, TypeError) as exc:
        raise ServiceUnavailable("The Solana node is not answering; try again shortly.") from exc
    assert draft.receiver_address is not None and draft.solana_reference is not None  # a Solana draft has both
    transaction = transfer_transaction(
        payer=payer,
        recipient=draft.receiver_address,
        amount_base_units=draft.amount_base_units,
        mint=asset.token_address if asset.kind == "token" else None,
        decimals=asset.decimals,
        reference=draft.solana_reference,
        blockhash=blockhash,
    )
    amount = format_amount(draft.amount_base_units, asset)
    message = f"{_label()}: {amount} {draft.currency}" + (f" - {draft.memo}" if draft.memo else "")
    return {"transaction": transaction, "message": message}

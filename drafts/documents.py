"""What a payer's wallet or bookkeeping needs from a draft: fee breakdown, Bitcoin
transaction template, PDF."""

from __future__ import annotations

from typing import Any

from drafts.models import Draft
from drafts.presenters import draft_json, fee_outputs_json
from drafts.txtemplate import TxOutput, build_tx_template
from payments.enums import FeePlacement, Method
from payments.qr import qr_svg
from payments.registry import get_asset


def draft_fees_json(draft: Draft) -> dict[str, Any]:
    fee_output = draft.fee_base_units if draft.fee_placement == FeePlacement.OUTPUT else 0
    return {
        "draftId": str(draft.id),
        "platformFee": draft.platform_fee,
        "platformFeeSats": fee_output,
        "platformFeeAddress": draft.platform_fee_address,
        "feeOutputs": fee_outputs_json(draft),
        "feeAccrued": draft.fee_placement == FeePlacement.ACCRUED,
        "totalToSendSats": draft.amount_base_units + fee_output,
    }


def draft_tx_template(draft: Draft) -> dict[str, Any] | None:
    """The PSBT-wallet template of an on-chain Bitcoin draft; None for other drafts."""
    if get_asset(draft.currency, draft.network).family != "bitcoin" or draft.method == Method.LIGHTNING:
        return None
    outputs = [TxOutput(address=draft.receiver_address, amount_sats=draft.amount_base_units, purpose="Receiver")]
    if draft.fee_placement == FeePlacement.OUTPUT:
        outputs.append(
            TxOutput(address=draft.platform_fee_address, amount_sats=draft.fee_base_units, purpose="PlatformFee")
        )
    return build_tx_template(draft_id=str(draft.id), network=draft.network, outputs=outputs)


def draft_pdf(draft: Draft) -> bytes:
    from drafts.pdf import render_draft_pdf  # WeasyPrint loads native libraries: import on use

    body = draft_json(draft)
    return render_draft_pdf({"draft": body, "qr_svg": qr_svg(draft.payment_uri) if draft.payment_uri else None})

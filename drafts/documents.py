"""What a payer's wallet or bookkeeping needs from a draft: fee breakdown, Bitcoin
transaction template, PDF (the payment request, then the receipt once paid)."""

from __future__ import annotations

import base64
from decimal import Decimal
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from accounts.languages import supported
from accounts.profiles import merchant_logo_png, merchant_profile_get
from drafts.enums import DraftStatus
from drafts.models import Draft
from drafts.presenters import fee_outputs_json, quote_is_live
from drafts.txtemplate import TxOutput, build_tx_template
from payments import formatting
from payments.enums import FeePlacement, Method
from payments.explorers import explorer_tx_url
from payments.registry import Asset, format_amount, get_asset


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
    assert draft.receiver_address is not None  # an on-chain draft is paid to its receiving address
    outputs = [TxOutput(address=draft.receiver_address, amount_sats=draft.amount_base_units, purpose="Receiver")]
    if draft.fee_placement == FeePlacement.OUTPUT:
        assert draft.platform_fee_address is not None  # a fee paid as an output has its address
        outputs.append(
            TxOutput(address=draft.platform_fee_address, amount_sats=draft.fee_base_units, purpose="PlatformFee")
        )
    return build_tx_template(draft_id=str(draft.id), network=draft.network, outputs=outputs)


RECEIPT_TEMPLATE = "drafts/receipt_pdf.html"


class Copy(StrEnum):
    """Whose copy of a draft's document: the merchant's shows the platform's fee; the payer's
    never does (an accrued fee is the merchant's business with the service)."""

    MERCHANT = "merchant"
    PAYER = "payer"


def draft_pdf(draft: Draft, *, language: str | None = None, copy: Copy = Copy.MERCHANT) -> bytes:
    """The draft as a one-page PDF in `language` (a LANGUAGES code; the account's language
    by default), times in the account's time zone with the zone named: a receipt once the draft
    is Confirmed, before then the payment request (what to send, where, until when)."""
    from drafts.pdf import render_draft_pdf  # WeasyPrint loads native libraries: import on use

    asset = get_asset(draft.currency, draft.network)
    profile = merchant_profile_get(user=draft.user)
    language = language or supported(profile.language) or settings.LANGUAGE_CODE
    fee = draft.platform_fee or {}
    with translation.override(language):
        fee_lines = []
        # The payer's copy names a fee only while it is an output the payer sends themselves.
        fee_shown = copy == Copy.MERCHANT or (
            draft.status != DraftStatus.CONFIRMED and draft.fee_placement == FeePlacement.OUTPUT
        )
        if fee.get("feeAmount") and fee_shown:
            fee_lines.append(
                {
                    "label": _("Service fee"),
                    "amount": formatting.asset_amount(str(fee["feeAmount"]), draft.currency),
                }
            )
        fiat = draft.fiat_currency if draft.fiat_amount is not None else None
        rate = formatting.rate_text(draft.rate, draft.currency, fiat) if fiat and draft.rate else None
        logo = merchant_logo_png(digest=profile.logo_digest) if profile.logo_digest else None
        common = {
            "draft_id": str(draft.id),
            "amount": formatting.asset_amount(format_amount(draft.amount_base_units, asset), draft.currency),
            "network": formatting.network_name(draft.network),
            "rate": rate,
            "rate_live": quote_is_live(draft),
            "payment_method": formatting.method_name(draft.method),
            "memo": draft.memo,
            "order_id": draft.order_id,
            "fee_lines": fee_lines,
            "zone": profile.time_zone or "UTC",
            "merchant": profile.display_name or settings.PAYMENT_URI_LABEL,
            "support_email": profile.support_email,
            "support_url": profile.support_url,
            "logo_data_uri": f"data:image/png;base64,{base64.b64encode(logo).decode()}" if logo else "",
        }
        if draft.status == DraftStatus.CONFIRMED:
            return render_draft_pdf(
                {**common, **_receipt(draft, asset, fiat), "merchant_copy": copy == Copy.MERCHANT},
                language=language,
                template=RECEIPT_TEMPLATE,
            )
        return render_draft_pdf(
            {
                **common,
                "receiver_address": draft.receiver_address or draft.lightning_address or _("Lightning invoice"),
                "fiat": formatting.fiat_amount(draft.fiat_amount, fiat)
                if fiat and draft.fiat_amount is not None
                else None,
                "expires_at": draft.expires_at,
                "created_at": draft.created_at,
                "payment_uri": draft.payment_uri,
            },
            language=language,
        )


def _receipt(draft: Draft, asset: Asset, fiat: str | None) -> dict[str, Any]:
    """What a receipt says was paid: the amount that arrived (an amount the merchant accepted
    short or over included), its fiat at the draft's rate, each transaction with its explorer
    link, and when it was paid."""
    received = draft.received_base_units if draft.received_base_units is not None else draft.amount_base_units
    received_fiat = None
    if fiat and draft.fiat_amount is not None:
        if received == draft.amount_base_units or not draft.rate:
            received_fiat = draft.fiat_amount
        else:
            received_fiat = Decimal(received).scaleb(-asset.decimals) * draft.rate
    txids = draft.paid_tx_ids or ([draft.paid_tx_id] if draft.paid_tx_id else [])
    return {
        "paid": formatting.asset_amount(format_amount(received, asset), draft.currency),
        "paid_fiat": formatting.fiat_amount(received_fiat, fiat) if received_fiat is not None and fiat else None,
        "accepted": draft.accepted_by_owner and received != draft.amount_base_units,
        "transactions": [
            {"txid": txid, "url": explorer_tx_url(network=draft.network, txid=txid, method=draft.method)}
            for txid in txids
        ]
        if draft.method != Method.LIGHTNING
        else [],
        "paid_at": draft.seen_at or draft.confirmed_at,
        "paid_late": draft.paid_late,
    }

"""What a payer's wallet or bookkeeping needs from a draft: fee breakdown, Bitcoin
transaction template, PDF."""

from __future__ import annotations

import base64
from typing import Any

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from accounts.languages import supported
from accounts.profiles import merchant_logo_png, merchant_profile_get
from drafts.models import Draft
from drafts.presenters import fee_outputs_json, quote_is_live
from drafts.txtemplate import TxOutput, build_tx_template
from payments import formatting
from payments.enums import FeePlacement, Method
from payments.registry import format_amount, get_asset


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


def draft_pdf(draft: Draft, *, language: str | None = None) -> bytes:
    """The draft as a one-page PDF in `language` (a LANGUAGES code; the account's language
    by default), times in the account's time zone with the zone named."""
    from drafts.pdf import render_draft_pdf  # WeasyPrint loads native libraries: import on use

    asset = get_asset(draft.currency, draft.network)
    profile = merchant_profile_get(user=draft.user)
    language = language or supported(profile.language) or settings.LANGUAGE_CODE
    fee = draft.platform_fee or {}
    with translation.override(language):
        fee_lines = []
        if fee.get("feeAmount"):
            fee_lines.append(
                {
                    "label": _("Service fee"),
                    "amount": formatting.asset_amount(str(fee["feeAmount"]), draft.currency),
                }
            )
        fiat = draft.fiat_amount is not None and draft.fiat_currency
        rate = formatting.rate_text(draft.rate, draft.currency, draft.fiat_currency) if fiat and draft.rate else None
        logo = merchant_logo_png(digest=profile.logo_digest) if profile.logo_digest else None
        return render_draft_pdf(
            {
                "draft_id": str(draft.id),
                "amount": formatting.asset_amount(format_amount(draft.amount_base_units, asset), draft.currency),
                "network": formatting.network_name(draft.network),
                "receiver_address": draft.receiver_address or draft.lightning_address or _("Lightning invoice"),
                "fiat": formatting.fiat_amount(draft.fiat_amount, draft.fiat_currency) if fiat else None,
                "rate": rate,
                "rate_live": quote_is_live(draft),
                "payment_method": formatting.method_name(draft.method),
                "memo": draft.memo,
                "fee_lines": fee_lines,
                "expires_at": draft.expires_at,
                "created_at": draft.created_at,
                "zone": profile.time_zone or "UTC",
                "payment_uri": draft.payment_uri,
                "merchant": profile.display_name or settings.PAYMENT_URI_LABEL,
                "support_email": profile.support_email,
                "support_url": profile.support_url,
                "logo_data_uri": f"data:image/png;base64,{base64.b64encode(logo).decode()}" if logo else "",
            },
            language=language,
        )

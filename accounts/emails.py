"""What every email's context gains from the account: its time zone, and the event data as a
person reads it in the email's language (`shown`, payments.formatting): fiat at its own
precision, network and method by display name, times in the account's zone with the zone named.
Registered with notifications from AccountsConfig.ready; a context that names its own
`timeZone` (the payer's receipt, in the merchant's zone) keeps it."""

from __future__ import annotations

from typing import Any

from accounts.profiles import merchant_profile_get
from payments import formatting


def email_shown(context: dict[str, Any], zone: str) -> dict[str, str]:
    """The event's values as the email's reader reads them, in the active language
    (notifications renders under the email's language)."""
    data = context.get("data") or {}
    rate = context.get("rate") or {}
    sent = data.get("sentCurrency") or ""  # given with every sent or received amount
    return {
        "fiat": formatting.fiat_amount(data["fiatAmount"], data["fiatCurrency"])
        if data.get("fiatAmount") not in (None, "") and data.get("fiatCurrency")
        else "",
        "sent": formatting.asset_amount(data["sentAmount"], sent) if data.get("sentAmount") else "",
        "received": formatting.asset_amount(data["receivedAmount"], sent) if data.get("receivedAmount") else "",
        # A refund's or an unmatched transfer's amount, in its own asset.
        "amount": formatting.asset_amount(data["amount"], data.get("currency") or "")
        if data.get("amount") not in (None, "")
        else "",
        "network": formatting.network_name(data.get("network")),
        "method": formatting.method_name(context.get("method") or data.get("method")),
        "when": formatting.moment(data.get("occurredAt"), zone),
        "rate": formatting.rate_text(rate["value"], rate["currency"], rate["fiat"]) if rate.get("value") else "",
    }


def account_email_context(user, context: dict[str, Any]) -> dict[str, Any]:
    zone = context.get("timeZone") or (merchant_profile_get(user=user).time_zone if user is not None else "UTC")
    return {"timeZone": zone, "shown": email_shown(context, zone)}

"""What every email's context gains from the account: its time zone, and the event data as a
person reads it in the email's language (`shown`, payments.formatting): fiat at its own
precision, network and method by display name, times in the account's zone with the zone named.
Registered with notifications from AccountsConfig.ready; a context that names its own
`timeZone` (the payer's receipt, in the merchant's zone) keeps it."""

from __future__ import annotations

from typing import Any

from accounts.profiles import merchant_profile_get
from core.problems import reworded
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


# The times an email's context holds as RFC 3339 (a security notice's, a refused recurring run's),
# shown to the minute as `shown.<key>`.
TIMES = ("at", "off_at", "usable_from", "runAt")


def _time(value: Any, zone: str) -> str:
    """A time to the minute in the reader's zone and language; text that is no RFC 3339 time (an
    email queued before times were kept so) as it is."""
    if not value:
        return ""
    try:
        return formatting.moment(str(value), zone, skeleton=formatting.MINUTES) or str(value)
    except ValueError:
        return str(value)


def attention_shown(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The daily digest's items with the amount as the reader writes it, with its asset's code
    ("1.234,5 USDC" in German), and the network by its display name."""
    return [
        {
            **item,
            "amount": formatting.asset_amount(item["amount"], item.get("currency") or "") if item.get("amount") else "",
            "network": formatting.network_name(item.get("network")),
        }
        for item in items
    ]


def account_email_context(user, context: dict[str, Any]) -> dict[str, Any]:
    zone = context.get("timeZone") or (merchant_profile_get(user=user).time_zone if user is not None else "UTC")
    shown: dict[str, Any] = email_shown(context, zone)
    shown |= {key: _time(context.get(key), zone) for key in TIMES}
    shown["attention"] = attention_shown(context.get("items") or [])
    # A refused recurring run's reason, worded again in the email's language (core.problems); an
    # email queued before the wording was kept says it in the English it was recorded in.
    shown["reason"] = reworded(context.get("wording")) or str(context.get("detail") or "")
    return {"timeZone": zone, "shown": shown}

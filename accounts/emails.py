"""What every email's context gains from the account: its time zone, and the event data as a
person reads it (`shown`): fiat at its own precision, network and method by display name,
times in the account's zone with the zone named. Registered with notifications from
AccountsConfig.ready; a context that names its own `timeZone` (the payer's receipt, in the
merchant's zone) keeps it."""

from __future__ import annotations

from typing import Any

from accounts.profiles import merchant_profile_get
from payments.display import fiat_text, method_name, network_name, rate_text, time_text


def email_shown(context: dict[str, Any], zone: str) -> dict[str, str]:
    data = context.get("data") or {}
    rate = context.get("rate") or {}
    return {
        "fiat": fiat_text(data.get("fiatAmount"), data.get("fiatCurrency")),
        "sent": f"{data['sentAmount']} {data['sentCurrency']}" if data.get("sentAmount") else "",
        "received": f"{data['receivedAmount']} {data['sentCurrency']}" if data.get("receivedAmount") else "",
        "network": network_name(data.get("network")),
        "method": method_name(context.get("method") or data.get("method")),
        "when": time_text(data.get("occurredAt"), zone),
        "rate": f"1 {rate['currency']} = {rate_text(rate['value'])} {rate['fiat']}" if rate.get("value") else "",
    }


def account_email_context(user, context: dict[str, Any]) -> dict[str, Any]:
    zone = context.get("timeZone") or (merchant_profile_get(user=user).time_zone if user is not None else "UTC")
    return {"timeZone": zone, "shown": email_shown(context, zone)}

"""A pay link's options: an asset on a network and who is paid, an address (or Lightning address)
or the next address of the owner's receiving wallet; checked against the registry when the link
is made (paylinks.services)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings

from core.problems import Problem
from drafts.models import Draft
from drafts.wallets import WalletArchived
from payments.addresses import validate_address
from payments.enums import Currency, Method, Network
from payments.lightning import lightning_address_check
from payments.rates.fiat import fiat_minor_units
from payments.registry import get_asset, require_network_enabled
from wallets.descriptors import derive_address
from wallets.services import receiving_wallet_get

# The assets a payer can choose on a pay link (interface spec, Payment request).
PAY_LINK_CURRENCIES = (Currency.BTC, Currency.ETH, Currency.USDC, Currency.USDT, Currency.EURC)
BITCOIN_NETWORKS = (Network.MAINNET, Network.TESTNET, Network.SIGNET, Network.REGTEST)


# --- Options --------------------------------------------------------------------------


@dataclass(frozen=True)
class PaymentOption:
    """One way to pay a request: an asset on a network, to the owner's receiver, or to the next
    address of the owner's receiving wallet (`receiving_wallet_id`, no fixed receiver)."""

    currency: str
    network: str
    method: str
    receiver_address: str | None
    receiving_wallet_id: str | None = None

    def as_json(self) -> dict[str, str | None]:
        data: dict[str, str | None] = {
            "currency": self.currency,
            "network": self.network,
            "method": self.method,
            "receiverAddress": self.receiver_address,
        }
        if self.receiving_wallet_id is not None:
            data["receivingWalletId"] = self.receiving_wallet_id
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PaymentOption:
        return cls(
            data["currency"], data["network"], data["method"], data["receiverAddress"], data.get("receivingWalletId")
        )

    def matches(self, draft: Draft) -> bool:
        return (draft.currency, draft.network, draft.method) == (self.currency, self.network, self.method)


def payment_option_check(*, currency: str, network: str, receiver_address: str, field: str) -> PaymentOption:
    """An option the registry supports, with a receiver valid for its network. A Lightning
    address (user@domain) on Bitcoin makes it a Lightning option; its server is asked for
    an invoice only when a payer picks it."""
    if currency not in PAY_LINK_CURRENCIES:
        raise Problem(
            f"Pay links accept {', '.join(PAY_LINK_CURRENCIES)}; {currency} is not one of them.",
            code="unsupported_currency",
            field=f"{field}.currency",
        )
    try:
        require_network_enabled(network)
        get_asset(currency, network)
    except Problem as exc:
        raise Problem(str(exc.detail), code=exc.code, field=f"{field}.network") from exc
    if network in BITCOIN_NETWORKS and "@" in receiver_address:
        address = lightning_address_check(receiver_address, field=f"{field}.receiverAddress")
        return PaymentOption(currency, network, Method.LIGHTNING, address)
    address = validate_address(network, receiver_address, field=f"{field}.receiverAddress")
    if address == settings.PLATFORM_FEE_ADDRESSES.get(network):
        raise Problem(
            "The receiver address is the operator's fee address.",
            code="invalid_address",
            field=f"{field}.receiverAddress",
        )
    return PaymentOption(currency, network, Method.SINGLE_OUTPUT, address)


def wallet_option_check(*, user, currency: str, network: str, wallet_id: Any, field: str) -> PaymentOption:
    """An on-chain Bitcoin option paid at the account's receiving wallet: its own wallet (in the
    caller's mode), on the option's network, not archived. Checked with the wallet's next address
    standing in; each draft made from the option takes the wallet's next address then."""
    wallet = receiving_wallet_get(user=user, wallet_id=wallet_id, field=field)
    if wallet.network != network:
        raise Problem(
            f"The receiving wallet is on {wallet.network}, not {network}.", code="network_mismatch", field=field
        )
    if wallet.archived_at is not None:
        raise WalletArchived(
            f"The receiving wallet {wallet.id} is archived: it hands out no more addresses.",
            field=field,
            extra={"walletId": str(wallet.id)},
        )
    standin = derive_address(wallet.descriptor, network=wallet.network, index=wallet.next_index)
    where = field.rsplit(".", 1)[0]
    checked = payment_option_check(currency=currency, network=network, receiver_address=standin, field=where)
    return PaymentOption(checked.currency, checked.network, checked.method, None, str(wallet.id))


def fiat_amount_check(fiat_currency: str, fiat_amount: Decimal) -> Decimal:
    if fiat_amount <= 0:
        raise Problem("fiatAmount must be positive.", code="min_value", field="fiatAmount")
    places = fiat_minor_units(fiat_currency)
    if fiat_amount != fiat_amount.quantize(Decimal(1).scaleb(-places)):
        raise Problem(
            f"{fiat_currency} amounts have {places} decimal places; {fiat_amount} is more precise than that.",
            code="too_precise",
            field="fiatAmount",
        )
    return fiat_amount

"""Turn a DraftRequest into exact numbers, before any transaction opens.

Everything that may touch the network (rate feed, LNURL-pay) happens here, so the
transaction that writes the draft holds no lock while waiting on I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.conf import settings
from django.utils.translation import gettext_noop

from core.problems import Problem, worded
from drafts.requests import DraftRequest
from fees.calculator import FeeQuote, fee_quote
from payments.addresses import check_receivable, validate_address
from payments.enums import Currency, Method
from payments.formatting import network_name
from payments.lightning import check_invoice_amount, decode_invoice, fetch_invoice_for_lightning_address
from payments.quotes import Quote, base_units_to_fiat, fiat_to_base_units, quote_lock, sek_value
from payments.registry import Asset, default_method, get_asset, require_network_enabled

DEFAULT_EXPIRY_HOURS = 24
BITCOIN_NETWORKS = ("Mainnet", "Testnet", "Signet", "Regtest")


@dataclass
class DraftPlan:
    asset: Asset
    method: str
    amount_base_units: int
    quote: Quote
    usd_rate: Decimal
    fee: FeeQuote | None
    expires_at: datetime
    required_confirmations: int
    receiver_address: str | None = None
    sender_address: str | None = None
    fiat_currency: str | None = None
    fiat_amount: Decimal | None = None
    memo: str | None = None
    bolt11: str | None = None
    payment_hash: str | None = None
    invoice_expires_at: datetime | None = None
    lightning_address: str | None = None
    lnurl_verify_url: str | None = None
    sek: dict[str, Any] | None = None
    is_fee_settlement: bool = False
    # Paid at a fresh address of a receiving wallet (drafts.wallets): which, and its index.
    receiving_wallet_id: UUID | None = None
    derivation_index: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def fiat_priced(self) -> bool:
        return self.fiat_amount is not None


def _method(asset: Asset, request: DraftRequest) -> str:
    requested = request.payment_method
    if request.single_output:
        if requested and requested != Method.SINGLE_OUTPUT:
            raise Problem(
                "singleOutput: true conflicts with the paymentMethod given.",
                code="conflicting_method",
                field="singleOutput",
            )
        requested = Method.SINGLE_OUTPUT
    if not requested and (request.bolt11 or _lightning_address(request)):
        requested = Method.LIGHTNING
    method = requested or default_method(asset)
    if method not in asset.methods:
        raise Problem(
            f"{method} is not available for {asset.currency} on {asset.network}; "
            f"use one of {', '.join(asset.methods)}.",
            code="unsupported_combination",
            field="paymentMethod",
        )
    return method


def _lightning_address(request: DraftRequest) -> str | None:
    address = request.lightning_address
    receiver = request.receiver_address
    if not address and receiver and "@" in receiver:
        address = receiver
    return address


def _amount_missing() -> Problem:
    return Problem(
        worded(
            gettext_noop("Give %(amount)s, or %(currency)s with %(fiat_amount)s."),
            amount="amountSats",
            currency="fiatCurrency",
            fiat_amount="fiatAmount",
        ),
        code="required",
        field="amountSats",
    )


def _check_amount(amount: int, asset: Asset, field: str, *, fee: FeeQuote | None = None) -> None:
    # The fee may be an output of the same transaction: the two together must stay possible.
    if amount + (fee.fee_base_units if fee is not None else 0) > asset.max_base_units:
        whole = asset.max_base_units // asset.unit
        raise Problem(
            worded(
                gettext_noop("The amount is more than %(amount)s, above any real payment in this asset."),
                amount=f"{whole:,} {asset.currency}",
            ),
            code="amount_too_large",
            field=field,
        )


def draft_plan(
    *, request: DraftRequest, now: datetime, is_fee_settlement: bool = False, charges_fee: bool = True
) -> DraftPlan:
    """Validate a creation request against the registry, rates and invoices, and price it.
    Without `charges_fee` (settlements, demo drafts) the draft carries no platform fee."""
    network = request.network
    asset, method = _asset_and_method(request)

    expiry_hours = request.expiry_hours or DEFAULT_EXPIRY_HOURS
    expires_at = now + (
        timedelta(minutes=request.expiry_minutes) if request.expiry_minutes else timedelta(hours=expiry_hours)
    )
    required = request.required_confirmations or asset.default_confirmations
    plan_fields: dict[str, Any] = {"memo": request.memo or None}

    if request.sender_address:
        plan_fields["sender_address"] = validate_address(network, request.sender_address, field="senderAddress")

    quote, usd_rate, amount = _price(request, asset, now)
    fiat_currency = request.fiat_currency.upper() if request.fiat_currency else None
    fiat_amount = request.fiat_amount

    if method == Method.LIGHTNING:
        amount, plan_fields = _plan_lightning(request, network, amount, fiat_currency, now, plan_fields)
        _check_amount(amount, asset, "bolt11")
        expires_at = min(expires_at, plan_fields["invoice_expires_at"])
    else:
        if amount is None:
            raise _amount_missing()
        if not request.receiver_address:
            raise Problem(
                worded(
                    gettext_noop(
                        "Name the address that receives the payment (or set a default receiving address for "
                        "%(network)s in the address book)."
                    ),
                    network=network_name(network),
                ),
                code="required",
                field="receiverAddress",
            )
        plan_fields["receiver_address"] = validate_address(network, request.receiver_address, field="receiverAddress")
        fee_address = settings.PLATFORM_FEE_ADDRESSES.get(network)
        if not is_fee_settlement and plan_fields["receiver_address"] == fee_address:
            # One address cannot take both outputs: wallets merge them and the amounts stop matching.
            raise Problem(
                worded(gettext_noop("The receiver address is the operator's fee address.")),
                code="invalid_address",
                field="receiverAddress",
            )
        amount_field = "fiatAmount" if fiat_currency else "amountSats"
        check_receivable(
            asset=asset, address=plan_fields["receiver_address"], amount_base_units=amount, amount_field=amount_field
        )

    fee = _fee(request, asset, amount, quote, usd_rate) if charges_fee and not is_fee_settlement else None
    return DraftPlan(
        asset=asset,
        method=method,
        amount_base_units=amount,
        quote=quote,
        usd_rate=usd_rate,
        fee=fee,
        expires_at=expires_at,
        required_confirmations=required,
        fiat_currency=fiat_currency,
        fiat_amount=fiat_amount,
        sek=sek_value(asset=asset, base_units=amount, last_known=not fiat_currency),
        is_fee_settlement=is_fee_settlement,
        **plan_fields,
    )


def fee_estimate(*, request: DraftRequest, now: datetime) -> DraftPlan:
    """The price and platform fee a draft of this amount would get now, creating nothing.

    The same registry checks, rates and fee rules as draft_plan; no receiver, invoice or
    Lightning address is looked at.
    """
    asset, method = _asset_and_method(request)
    quote, usd_rate, amount = _price(request, asset, now)
    if amount is None:
        raise _amount_missing()
    return DraftPlan(
        asset=asset,
        method=method,
        amount_base_units=amount,
        quote=quote,
        usd_rate=usd_rate,
        fee=_fee(request, asset, amount, quote, usd_rate),
        expires_at=quote.expires_at,
        required_confirmations=asset.default_confirmations,
        fiat_currency=quote.fiat_currency if request.fiat_currency else None,
        fiat_amount=request.fiat_amount,
    )


def _asset_and_method(request: DraftRequest) -> tuple[Asset, str]:
    network = request.network
    require_network_enabled(network)
    currency = request.currency or (Currency.BTC if network in BITCOIN_NETWORKS else None)
    if currency is None:
        raise Problem(worded(gettext_noop("Name the currency to pay in.")), code="required", field="currency")
    asset = get_asset(currency, network)
    return asset, _method(asset, request)


def _price(request: DraftRequest, asset: Asset, now: datetime) -> tuple[Quote, Decimal, int | None]:
    """(the locked quote, USD per whole unit, the amount in base units or None for an invoice's amount).
    An amount given in the asset needs no live rate: its fee and USD value are priced at the last
    known (or bundled) rate when no fresh one is at hand, and its quote says not live."""
    last_known = not request.fiat_currency
    usd_rate = quote_lock(asset=asset, fiat_currency="USD", now=now, last_known=last_known).rate
    amount: int | None
    if request.fiat_currency:
        quote = quote_lock(asset=asset, fiat_currency=request.fiat_currency.upper(), now=now)
        assert request.fiat_amount is not None  # the request gives fiatAmount with fiatCurrency
        amount = fiat_to_base_units(request.fiat_amount, quote.rate, asset.decimals)
        if amount <= 0:
            raise Problem(
                worded(gettext_noop("%(field)s is worth less than one base unit of the asset."), field="fiatAmount"),
                code="amount_too_small",
                field="fiatAmount",
            )
        _check_amount(amount, asset, "fiatAmount")
    else:
        quote = quote_lock(asset=asset, fiat_currency="USD", now=now, last_known=True)
        amount = request.amount_base_units
        if amount is not None:
            _check_amount(amount, asset, "amountSats")
    return quote, usd_rate, amount


def _fee(request: DraftRequest, asset: Asset, amount: int, quote: Quote, usd_rate: Decimal) -> FeeQuote:
    if request.fiat_currency:  # price the fee on what was asked, not on the rounded base units
        fiat_amount = request.fiat_amount
        assert fiat_amount is not None  # the request gives fiatAmount with fiatCurrency
        usd_value = fiat_amount if quote.fiat_currency == "USD" else fiat_amount * usd_rate / quote.rate
    else:
        usd_value = base_units_to_fiat(amount, usd_rate, asset.decimals)
    fee = fee_quote(
        usd_value=usd_value, asset=asset, usd_rate=usd_rate, fiat_currency=quote.fiat_currency, fiat_rate=quote.rate
    )
    _check_amount(amount, asset, "fiatAmount" if request.fiat_currency else "amountSats", fee=fee)
    return fee


def _plan_lightning(
    request: DraftRequest,
    network: str,
    amount: int | None,
    fiat_currency: str | None,
    now: datetime,
    plan_fields: dict[str, Any],
) -> tuple[int, dict[str, Any]]:
    bolt11 = request.bolt11
    address = _lightning_address(request)
    if bolt11 and address:
        raise Problem("Give a bolt11 invoice or a Lightning address, not both.", code="ambiguous", field="bolt11")
    if not bolt11 and not address:
        raise Problem(
            "A Lightning draft needs a bolt11 invoice or a Lightning address.", code="required", field="bolt11"
        )
    if bolt11:
        if fiat_currency:
            raise Problem(
                "A bolt11 invoice fixes the amount; price it in fiat only with a Lightning address.",
                code="ambiguous",
                field="fiatAmount",
            )
        invoice = decode_invoice(bolt11, network=network, now=now)
        amount = check_invoice_amount(invoice, request.amount_base_units)
    else:
        if amount is None:
            raise Problem(
                "A Lightning-address draft needs amountSats or fiatCurrency with fiatAmount: the address's "
                "server makes an invoice for that amount.",
                code="required",
                field="amountSats",
            )
        assert address is not None  # no invoice given: the address is
        fetched = fetch_invoice_for_lightning_address(address, amount * 1000, network=network)
        bolt11, invoice = fetched.bolt11, decode_invoice(fetched.bolt11, network=network, now=now)
        plan_fields["lnurl_verify_url"] = fetched.verify_url
        plan_fields["lightning_address"] = address
    plan_fields.update(
        bolt11=bolt11,
        payment_hash=invoice.payment_hash,
        invoice_expires_at=invoice.expires_at,
        receiver_address=None,
    )
    return amount, plan_fields

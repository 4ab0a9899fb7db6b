"""What a caller asks for when it creates a draft, and where the request came from.

Every surface (REST, MCP, pay-link checkout, recurring templates, the demo, fee
settlement, requote) fills a ``DraftRequest`` and hands it to
``drafts.creation.draft_create_from_request``: one typed door, snake_case, no API dicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.db import models


class OriginKind(models.TextChoices):
    API = "Api"
    PAYMENT_REQUEST = "PaymentRequest"
    RECURRING_TEMPLATE = "RecurringTemplate"
    DEMO = "Demo"
    SETTLEMENT = "Settlement"
    REFUND = "Refund"


@dataclass(frozen=True)
class Origin:
    """Who asked for the draft: recorded on it and carried in its events."""

    kind: str = OriginKind.API
    payment_request_id: UUID | None = None
    order_id: str | None = None
    template_id: UUID | None = None
    # False: the draft is written without a draft.created event (a pay link's checkout draft
    # when the account keeps those quiet; its payment is still announced).
    announce: bool = True

    @classmethod
    def api(cls) -> Origin:
        return cls(OriginKind.API)

    @classmethod
    def payment_request(cls, payment_request_id: UUID, order_id: str | None = None, *, announce: bool = True) -> Origin:
        return cls(
            OriginKind.PAYMENT_REQUEST, payment_request_id=payment_request_id, order_id=order_id, announce=announce
        )

    @classmethod
    def template(cls, template_id: UUID) -> Origin:
        return cls(OriginKind.RECURRING_TEMPLATE, template_id=template_id)

    @classmethod
    def demo(cls) -> Origin:
        return cls(OriginKind.DEMO)

    @classmethod
    def settlement(cls) -> Origin:
        return cls(OriginKind.SETTLEMENT)

    @classmethod
    def refund(cls) -> Origin:
        """A merchant's payment back to a customer (refunds/): it owes no fee."""
        return cls(OriginKind.REFUND)

    @property
    def is_fee_settlement(self) -> bool:
        return self.kind == OriginKind.SETTLEMENT

    @property
    def charges_fee(self) -> bool:
        """Settlements pay fees, demo drafts (the operator's own, on test networks) and refunds
        (money going back) owe none."""
        return self.kind not in (OriginKind.SETTLEMENT, OriginKind.DEMO, OriginKind.REFUND)


@dataclass(frozen=True)
class DraftRequest:
    network: str
    currency: str | None = None
    payment_method: str | None = None
    receiver_address: str | None = None
    amount_base_units: int | None = None
    fiat_currency: str | None = None
    fiat_amount: Decimal | None = None
    sender_address: str | None = None
    bolt11: str | None = None
    lightning_address: str | None = None
    memo: str | None = None
    expiry_hours: int | None = None
    # Finer than the API's expiryHours, for short-lived drafts (the demo); wins when set.
    expiry_minutes: int | None = None
    required_confirmations: int | None = None
    single_output: bool = False
    # Paid at the next unused address of this receiving wallet (drafts.wallets), not receiver_address.
    receiving_wallet_id: UUID | None = None

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> DraftRequest:
        """From a validated CreateDraftRequest (the API's camelCase names)."""
        return cls(
            network=data["network"],
            currency=data.get("currency"),
            payment_method=data.get("paymentMethod"),
            receiver_address=data.get("receiverAddress"),
            amount_base_units=data.get("amountSats"),
            fiat_currency=data.get("fiatCurrency"),
            fiat_amount=data.get("fiatAmount"),
            sender_address=data.get("senderAddress"),
            bolt11=data.get("bolt11"),
            lightning_address=data.get("lightningAddress"),
            memo=data.get("memo"),
            expiry_hours=data.get("expiryHours"),
            required_confirmations=data.get("requiredConfirmations"),
            single_output=bool(data.get("singleOutput")),
            receiving_wallet_id=data.get("receivingWalletId"),
        )

    @property
    def fiat_priced(self) -> bool:
        return self.fiat_currency is not None

"""Writes for refunds: the one door every surface (REST, MCP, dashboard, claim page) calls.

A refund is issued against a Confirmed draft; the customer names an address on the claim
link; the merchant approves it, which creates the payout: an ordinary draft (origin Refund,
SingleOutput, no fee) to the customer's address, through the drafts creation door. The
merchant pays it from their own wallet and the watchers confirm it through the drafts'
payment door; the refund becomes Paid in the transaction that confirms that draft
(`refund_payout_confirmed`, registered with the drafts state machine). Every status change
goes through `_transition`: the refund's row locked, the allowed-transition table, the
refund.* event in the same transaction.

A refund lives in its paid draft's mode (accounts.modes, docs/test-mode.md): its payout draft,
its events and its emails are made in that mode; and it pays out on the paid draft's side,
main or test networks (`network_side_check`).
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from accounts.modes import livemode_of, mode_set, network_check
from audit import services as audit
from core.problems import Conflict, NotFound, Problem
from drafts.creation import draft_create, draft_plan_for
from drafts.enums import DraftStatus as D
from drafts.idempotency import KEY_TAKEN, KeyClaim, KeyTaken
from drafts.models import Draft
from drafts.requests import DraftRequest, Origin, OriginKind
from drafts.services import draft_cancel
from notifications import kinds as email_kinds
from notifications.services import email_enqueue
from payments.addresses import AddressError, InvalidAddress, check_address, validate_address
from payments.enums import Method, Network
from payments.quotes import base_units_to_fiat, quote_lock
from payments.rates.fiat import fiat_minor_units
from payments.registry import NETWORKS, Asset, get_asset, network_info, require_network_enabled
from refunds.amounts import fiat_checked, fiat_share, in_paid_asset, paid_base_units, refunded_base_units
from refunds.branding import claim_facts, customer_language_of
from refunds.events import refund_event_data
from refunds.limits import approval_limit_check
from refunds.models import OPEN_REFUND_STATUSES, Refund, RefundStatus
from webhooks.models import EventType
from webhooks.services import event_record

R = RefundStatus
TOKEN_BYTES = 32  # 256 bits, 43 URL-safe characters
DEFAULT_EXPIRY_HOURS = 24 * 14
MAX_EXPIRY_HOURS = 24 * 90
# How long the payout draft stays open for the merchant's payment (then watched for the grace window).
PAYOUT_EXPIRY_HOURS = 72

# Where each status may go. A payout that confirms after its refund was cancelled still paid
# the customer: the refund records that truth (Cancelled -> Paid, only from the chain).
ALLOWED_TRANSITIONS: dict[str, set[str]] = {
    R.CLAIMABLE: {R.CLAIMED, R.CANCELLED, R.EXPIRED},
    R.CLAIMED: {R.APPROVED, R.CANCELLED},
    R.APPROVED: {R.PAID, R.CANCELLED},
    R.PAID: set(),
    R.CANCELLED: {R.PAID},
    R.EXPIRED: set(),
}
EVENT_OF_STATUS: dict[str, EventType] = {
    R.CLAIMED: EventType.REFUND_CLAIMED,
    R.APPROVED: EventType.REFUND_APPROVED,
    R.PAID: EventType.REFUND_PAID,
    R.CANCELLED: EventType.REFUND_CANCELLED,
    R.EXPIRED: EventType.REFUND_EXPIRED,
}


class RefundTransitionNotAllowed(Conflict):
    default_code = "invalid_state"


class RefundClosed(Conflict):
    default_code = "refund_closed"


class RefundExceedsPayment(Problem):
    default_code = "exceeds_refundable"


class RefundNetworkMismatch(Problem):
    default_code = "refund_network_mismatch"


def _side(network: str) -> str:
    return "test" if network_info(network).is_testnet else "main"


def network_side_check(*, paid_network: str, network: str, field: str = "network") -> None:
    """A refund pays out on the side its payment came in on: main networks for a payment on a
    main network, test networks for one on a test network (docs/decisions.md). A test-network
    payment never funds a main-network refund, nor the reverse."""
    if _side(paid_network) != _side(network):
        raise RefundNetworkMismatch(
            f"The payment came in on {paid_network}, a {_side(paid_network)} network; its refund is paid on a "
            f"{_side(paid_network)} network too, and {network} is a {_side(network)} network.",
            field=field,
            extra={"paidNetwork": paid_network, "network": network},
        )


def claim_url(refund: Refund) -> str:
    return f"{settings.BASE_URL}/refund/{refund.token}"


def _locked(refund_id: UUID) -> Refund:
    # No select_related: after waiting for the lock PostgreSQL re-reads the locked row only.
    return Refund.objects.select_for_update().get(pk=refund_id)


def _transition(refund: Refund, to: str, *, now: datetime) -> None:
    """Move a locked refund to `to` and record its refund.* event. Caller holds the row lock."""
    if to not in ALLOWED_TRANSITIONS[refund.status]:
        raise RefundTransitionNotAllowed(
            f"A {refund.status} refund cannot become {to}.",
            extra={"refundStatus": refund.status, "refundId": str(refund.id)},
        )
    refund.status = to
    if to in (R.PAID, R.CANCELLED, R.EXPIRED):
        refund.closed_at = now
    refund.save()
    event_record(
        user=refund.user,
        type=EVENT_OF_STATUS[to],
        data=refund_event_data(refund, occurred_at=now),
        draft_id=refund.draft_id,
        livemode=refund.livemode,  # to the endpoints of the refund's mode only
    )


# --- Issue ------------------------------------------------------------------------------


def _refund_asset(draft: Draft, currency: str | None, network: str | None) -> Asset:
    currency, network = currency or draft.currency, network or draft.network
    try:
        require_network_enabled(network)
    except Problem as exc:
        raise Problem(str(exc.detail), code=exc.code, field="network") from exc
    network_side_check(paid_network=draft.network, network=network)
    asset = get_asset(currency, network)  # the supported (currency, network) matrix; names both fields
    if Method.SINGLE_OUTPUT not in asset.methods:
        raise Problem(
            f"A refund is a plain on-chain transfer; {currency} on {network} has none.",
            code="unsupported_combination",
            field="network",
        )
    return asset


def refund_issue(
    *,
    user,
    draft: Draft,
    currency: str | None = None,
    network: str | None = None,
    amount_base_units: int | None = None,
    fiat_currency: str | None = None,
    fiat_amount: Decimal | None = None,
    full: bool = False,
    reason: str | None = None,
    customer_email: str | None = None,
    expiry_hours: int | None = None,
    now: datetime | None = None,
    key: KeyClaim | None = None,
) -> Refund | KeyTaken:
    """Issue a refund of (part of) a Confirmed draft's payment: a claim link for the customer.

    Exactly one of `full` (what is left to refund), `amount_base_units` (exact, in the refund's
    asset) or a fiat price. Its value is measured in the paid asset and may not exceed what is
    left of the payment after the draft's other open or paid refunds. Quotes are locked before
    any transaction opens; the draft's row is locked while what is left is counted, so two
    refunds issued at once cannot together exceed the payment.
    """
    now = now or timezone.now()
    if draft.user_id != user.pk or draft.livemode != livemode_of(user):  # as accounts.modes.owned
        raise NotFound("No draft matches the given query.", field="draftId")
    if draft.status != D.CONFIRMED or draft.origin in (OriginKind.REFUND, OriginKind.SETTLEMENT):
        raise Conflict(
            "Only a Confirmed payment to you can be refunded.",
            code="refund_not_allowed",
            field="draftId",
            extra={"draftStatus": draft.status},
        )
    chosen = (("full", full), ("amountSats", amount_base_units is not None), ("fiatAmount", fiat_amount is not None))
    given = [name for name, present in chosen if present]
    if len(given) != 1:
        raise Problem(
            "Give exactly one of full, amountSats or fiatAmount (with fiatCurrency).",
            code="required" if not given else "ambiguous",
            field="amountSats" if not given else given[1],
        )
    asset = _refund_asset(draft, currency, network)
    network_check(user, asset.network)  # a test draft is on a test network, so this holds already
    paid = get_asset(draft.currency, draft.network)
    same_asset = (asset.currency, asset.network) == (paid.currency, paid.network)
    if amount_base_units is not None and amount_base_units <= 0:
        raise Problem("amountSats must be positive.", code="min_value", field="amountSats")
    if fiat_amount is not None:
        if not fiat_currency:
            raise Problem("A fiat-priced refund names its fiatCurrency.", code="required", field="fiatCurrency")
        fiat_currency, fiat_amount = fiat_checked(fiat_currency, fiat_amount)
    elif fiat_currency:
        raise Problem("fiatCurrency goes with fiatAmount.", code="unexpected", field="fiatCurrency")
    expiry_hours = expiry_hours or DEFAULT_EXPIRY_HOURS
    if not 1 <= expiry_hours <= MAX_EXPIRY_HOURS:
        raise Problem(f"expiryHours is 1 to {MAX_EXPIRY_HOURS}.", code="max_value", field="expiryHours")

    # Pricing (rate look-ups) before the transaction; `full` is priced on what is left now and
    # checked again under the lock.
    quote: dict | None = None
    field = given[0]
    if full:
        left = paid_base_units(draft) - refunded_base_units(draft.id)
        if left <= 0:
            raise RefundExceedsPayment("Nothing is left to refund of this payment.", field="full")
        share = left
        if same_asset:
            amount_base_units = left
        else:  # the value of what is left, priced in the draft's fiat (USD if it had none) at payout
            fiat_currency = draft.fiat_currency or "USD"
            rate = quote_lock(asset=paid, fiat_currency=fiat_currency, now=now)
            places = fiat_minor_units(fiat_currency)
            fiat_amount = base_units_to_fiat(left, rate.rate, paid.decimals).quantize(
                Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP
            )
            quote = {"paidAsset": rate.as_json()}
    elif amount_base_units is not None:
        share = amount_base_units
        if not same_asset:
            share, quote = in_paid_asset(base_units=amount_base_units, asset=asset, paid=paid, now=now)
    else:
        assert fiat_currency is not None and fiat_amount is not None  # exactly one of the three was given
        share, quote = fiat_share(draft, paid, fiat_currency, fiat_amount, now)
    share = max(share, 1)

    with transaction.atomic():
        if key is not None and not key.take():  # the key already holds an answer: nothing is written
            return KEY_TAKEN
        Draft.objects.select_for_update().filter(pk=draft.pk).first()  # one count of what is left at a time
        left = paid_base_units(draft) - refunded_base_units(draft.id)
        if share > left:
            raise RefundExceedsPayment(
                f"This refund is worth {share} base units of the {paid.currency} paid; only {left} are left to refund.",
                field=field,
                extra={"refundableBaseUnits": max(left, 0), "requestedBaseUnits": share},
            )
        refund = Refund.objects.create(
            user=user,
            draft=draft,
            token=secrets.token_urlsafe(TOKEN_BYTES),
            currency=asset.currency,
            network=asset.network,
            amount_base_units=amount_base_units,
            fiat_currency=fiat_currency if fiat_amount is not None else None,
            fiat_amount=fiat_amount,
            share_base_units=share,
            livemode=draft.livemode,
            quote=quote,
            reason=reason or None,
            customer_email=customer_email or None,
            customer_language=customer_language_of(draft, user),
            expires_at=now + timedelta(hours=expiry_hours),
            created_at=now,
        )
        data = refund_event_data(refund, occurred_at=now)
        event_record(user=user, type=EventType.REFUND_CREATED, data=data, draft_id=draft.id, livemode=refund.livemode)
        if refund.customer_email:
            email_enqueue(
                to=refund.customer_email,
                # A test refund's email is marked as a test and goes to the account's own address
                # unless the operator allows test emails to customers (notifications.services).
                user=None if refund.livemode else user,
                livemode=refund.livemode,
                kind=email_kinds.REFUND_CLAIM_LINK,
                context={
                    "data": data,
                    "reason": refund.reason,
                    **claim_facts(refund).email_context(),
                    "url": claim_url(refund),
                    # In the customer's language: the pay page's they paid on, else the merchant's.
                    "language": refund.customer_language,
                },
                dedup_key=f"refund_claim_link:{refund.id}",
            )
        if key is not None:
            key.keep(refund)
        return refund


# --- Customer side (claim link) -----------------------------------------------------------


def _check_claimable(refund: Refund, now: datetime) -> None:
    status = refund.status
    if status == R.CLAIMABLE and refund.expires_at <= now:
        status = R.EXPIRED
    if status == R.CLAIMABLE:
        return
    details: dict[str, str] = {
        R.CLAIMED: "This refund has been claimed already; the merchant is reviewing it.",
        R.APPROVED: "This refund has been claimed already; the merchant is sending it.",
        R.PAID: "This refund has been paid.",
        R.CANCELLED: "The merchant cancelled this refund.",
        R.EXPIRED: "This refund link has expired; ask the merchant for a new one.",
    }
    raise RefundClosed(details[status], extra={"refundStatus": status})


def refund_claim(*, token: str, refund_address: str, now: datetime | None = None) -> Refund:
    """The customer names the address to be refunded to (Claimable -> Claimed): checked for the
    refund's network by the same validators as a draft's receiver."""
    now = now or timezone.now()
    refund = Refund.objects.select_related("draft").get(token=token)
    _check_claimable(refund, now)
    network_side_check(paid_network=refund.draft.network, network=refund.network)  # one issued before the rule
    entered = (refund_address or "").strip()
    try:
        address = validate_address(refund.network, entered, field="refundAddress")
    except InvalidAddress as exc:
        other_side = _address_side_other(refund.network, entered)
        english = (get_language() or "en").split("-")[0] == "en"
        if english and other_side is None:
            raise  # the validator's own reason ("a Bitcoin address, not ..."), written in English
        # The customer reads this on the claim page or API: in their language.
        message = _("This is not a valid %(network)s address; check it and paste it again.") % {
            "network": Network(refund.network).label
        }
        if other_side is None:
            raise InvalidAddress(message, field="refundAddress", extra=exc.extra) from exc
        if english:
            message = (
                f"This is a {other_side.label} address; this refund is paid on {Network(refund.network).label}. "
                "Give an address of that network."
            )
        raise RefundNetworkMismatch(
            message, field="refundAddress", extra={"network": refund.network, "addressNetwork": other_side}
        ) from exc
    if address == settings.PLATFORM_FEE_ADDRESSES.get(refund.network):
        raise Problem(_("That is the operator's fee address."), code="invalid_address", field="refundAddress")
    with transaction.atomic():
        locked = _locked(refund.id)
        _check_claimable(locked, now)
        locked.refund_address, locked.claimed_at = address, now
        _transition(locked, R.CLAIMED, now=now)
        email_enqueue(
            user=locked.user,
            kind=email_kinds.REFUND_CLAIMED,
            context={"data": refund_event_data(locked, occurred_at=now), "reason": locked.reason},
            dedup_key=f"refund_claimed:{locked.id}",
            livemode=locked.livemode,
        )
        return locked


def _address_side_other(network: str, address: str) -> Network | None:
    """The network of the other side (main or test) of the same chain an address belongs to, when
    it is valid there and not on `network`: a Bitcoin mainnet address given for a Testnet refund.
    (EVM and Solana addresses look the same on both sides: nothing to tell.)"""
    info = network_info(network)
    for other, other_info in NETWORKS.items():
        if other_info.family != info.family or other_info.is_testnet == info.is_testnet:
            continue
        try:
            check_address(other, address)
        except AddressError:
            continue
        return Network(other)
    return None


# --- Merchant side ------------------------------------------------------------------------


def _payout_request(refund: Refund) -> DraftRequest:
    return DraftRequest(
        network=refund.network,
        currency=refund.currency,
        payment_method=Method.SINGLE_OUTPUT,
        receiver_address=refund.refund_address,
        amount_base_units=refund.amount_base_units,
        fiat_currency=refund.fiat_currency if refund.fiat_priced else None,
        fiat_amount=refund.fiat_amount,
        memo="Refund",
        expiry_hours=PAYOUT_EXPIRY_HOURS,
        single_output=True,
    )


def refund_approve(*, refund: Refund, now: datetime | None = None, role: str | None = None) -> Refund:
    """The merchant approves the claimed address (Claimed -> Approved): the payout draft they
    pay from their own wallet is created through the drafts door, in the same transaction as
    the approval. Priced first (a fiat price locks its rate: network I/O, outside any
    transaction); then the refund's own row is locked, so of two approvals at once one creates
    the payout and the other finds the refund Approved. Another open draft of the account
    billing the same amount to the address is a 409 (amount_collision): the refund stays Claimed."""
    now = now or timezone.now()
    _check_claimed(refund)
    network_side_check(paid_network=refund.draft.network, network=refund.network)  # one issued before the rule
    owner = mode_set(refund.user, livemode=refund.livemode)  # the payout is made in the refund's mode
    plan = draft_plan_for(request=_payout_request(refund), origin=Origin.refund(), now=now, user=owner)
    approval_limit_check(refund=refund, amount_base_units=plan.amount_base_units, role=role)  # a member's role
    with transaction.atomic():
        locked = _locked(refund.id)
        _check_claimed(locked)
        payout = draft_create(user=owner, plan=plan, origin=Origin.refund(), now=now)
        locked.payout_draft, locked.approved_at = payout, now
        _transition(locked, R.APPROVED, now=now)
        approved = {"refund": locked.id, "payoutDraft": payout.id, "amountBaseUnits": locked.amount_base_units}
        audit.record(organization=locked.user_id, action="refund.approved", changes=approved)
        return locked


def _check_claimed(refund: Refund) -> None:
    if refund.status != R.CLAIMED:
        raise RefundTransitionNotAllowed(
            f"A {refund.status} refund cannot be approved; only a Claimed one.",
            code="approve_not_allowed",
            extra={"refundStatus": refund.status},
        )


class PayoutInProgress(Conflict):
    default_code = "payment_in_progress"


def refund_cancel(*, refund: Refund, now: datetime | None = None) -> Refund:
    """The merchant cancels an open refund; an approved one's payout draft is cancelled with it.
    Refused once a payment of the payout has been seen (it may still confirm)."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(refund.id)
        if locked.status not in OPEN_REFUND_STATUSES:
            raise RefundTransitionNotAllowed(
                f"A {locked.status} refund cannot be cancelled.",
                code="cancel_not_allowed",
                extra={"refundStatus": locked.status},
            )
        payout = locked.payout_draft
        if payout is not None and payout.status in (D.SEEN, D.AMOUNT_MISMATCH, D.CONFIRMED):
            raise PayoutInProgress(
                "A payment of this refund has been seen; it cannot be cancelled now.",
                extra={"payoutDraftId": str(payout.id), "draftStatus": payout.status},
            )
        if payout is not None and payout.status == D.PENDING:
            draft_cancel(draft=payout, now=now)
        _transition(locked, R.CANCELLED, now=now)
        return locked


def refund_expire(*, refund_id: UUID, now: datetime | None = None) -> Refund | None:
    """Claimable past its expiry -> Expired (refund.expired). Safe to call twice."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(refund_id)
        if locked.status != R.CLAIMABLE or locked.expires_at > now:
            return None
        _transition(locked, R.EXPIRED, now=now)
        return locked


def refunds_expire_due(*, now: datetime | None = None, batch: int = 500) -> int:
    """Expire a bounded batch of Claimable refunds past their expiry (the beat task)."""
    now = now or timezone.now()
    due = Refund.objects.filter(status=R.CLAIMABLE, expires_at__lte=now).values_list("id", flat=True)[:batch]
    return sum(1 for pk in list(due) if refund_expire(refund_id=pk, now=now) is not None)


def refund_payout_confirmed(*, draft: Draft, now: datetime) -> None:
    """Registered with the drafts state machine (RefundsConfig.ready); runs inside the
    transaction that confirms `draft`. A payout draft makes its refund Paid there."""
    if draft.origin != OriginKind.REFUND:
        return
    refund = Refund.objects.select_for_update().filter(payout_draft_id=draft.id).first()
    if refund is None or refund.status == R.PAID:
        return
    refund.payout_draft, refund.paid_at = draft, now
    _transition(refund, R.PAID, now=now)
    email_enqueue(
        user=refund.user,
        kind=email_kinds.REFUND_PAID,
        context={"data": refund_event_data(refund, occurred_at=now), "reason": refund.reason},
        dedup_key=f"refund_paid:{refund.id}",
        livemode=refund.livemode,
    )

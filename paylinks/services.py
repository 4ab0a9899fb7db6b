"""Writes for payment requests (pay links) and the payer's checkout.

A request offers options (asset, network, receiver); a Bitcoin option may name the account's
receiving wallet instead of an address (`receivingWalletId`): each draft made from it then gets
the wallet's next address (drafts.wallets), never one another draft had. When the payer picks one, a draft
is created through the drafts door with the request as its origin. The request keeps one
current draft: picking the same option again returns it, picking another cancels it and
creates a new one, all under the request's row lock so two payers racing one link end
with one pending draft. The request becomes Paid in the same transaction as the draft's
move to Confirmed (`payment_request_draft_confirmed`, called by the drafts state machine).
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, TypeGuard
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.modes import by_key, livemode_of, mode_set, network_check
from accounts.profiles import https_url_check, merchant_profile_get
from addressbook.selectors import (
    address_book_receiver,
    default_receiving_wallet,
    receiver_lock_check,
    receiver_or_default,
)
from core.problems import Conflict, Problem
from drafts.creation import draft_create, draft_plan_for
from drafts.enums import DraftStatus as D
from drafts.idempotency import KEY_TAKEN, KeyClaim, KeyTaken
from drafts.models import Draft
from drafts.presenters import quote_is_live
from drafts.requests import DraftRequest, Origin
from drafts.services import draft_cancel, draft_supersede
from drafts.wallets import GapLimitReached, WalletArchived, wallet_draft_write, wallet_standin
from fees import ledger
from fees.ledger import FeesOutstanding
from notifications import kinds as email_kinds
from notifications.services import email_enqueue
from paylinks.events import payment_request_event_data
from paylinks.models import PayLinkPreference, PaymentRequest, PaymentRequestStatus
from paylinks.options import (
    PaymentOption,
    fiat_amount_check,
    payment_option_check,
    wallet_option_check,
)
from paylinks.selectors import announces_checkout_drafts
from payments.enums import Method
from payments.explorers import explorer_tx_url
from payments.rates import normalise_fiat
from webhooks.models import EventType
from webhooks.services import event_record

R = PaymentRequestStatus
TOKEN_BYTES = 32  # 256 bits, 43 URL-safe characters
MAX_OPTIONS = 20
DEFAULT_EXPIRY_HOURS = 24


# --- Owner side -----------------------------------------------------------------------


def payment_request_create(
    *,
    user,
    fiat_currency: str,
    fiat_amount: Decimal,
    options: list[dict[str, str]],
    order_id: str | None = None,
    memo: str | None = None,
    expiry_hours: int | None = None,
    return_url: str | None = None,
    now: datetime | None = None,
    key: KeyClaim | None = None,
) -> PaymentRequest | KeyTaken:
    """Check the request against the registry and write it: the request, or KEY_TAKEN when
    `key` already held an answer (nothing written). The key is taken first in the request's
    transaction and holds its answer when it commits."""
    now = now or timezone.now()
    fiat_currency = normalise_fiat(fiat_currency)
    fiat_amount = fiat_amount_check(fiat_currency, fiat_amount)
    return_url = https_url_check(return_url, field="returnUrl") if return_url else None
    if not options:
        raise Problem("Offer at least one option to pay with.", code="required", field="options")
    if len(options) > MAX_OPTIONS:
        raise Problem(f"Offer at most {MAX_OPTIONS} options.", code="max_length", field="options")
    checked: list[PaymentOption] = []
    for index, option in enumerate(options):
        where = f"options[{index}]"
        receiver = option.get("receiverAddress")
        wallet_id = option.get("receivingWalletId")
        if option.get("addressBookId"):  # the entry's address now; later edits of the entry do not move it
            receiver = address_book_receiver(
                user=user, entry_id=option["addressBookId"], network=option["network"], field=f"{where}.addressBookId"
            )
        elif not receiver and not wallet_id:
            default_wallet = default_receiving_wallet(user=user, network=option["network"])
            if default_wallet is not None:  # the address book's default is a wallet: its next address per draft
                wallet_id = str(default_wallet)
            else:
                receiver = receiver_or_default(
                    user=user, network=option["network"], receiver=None, field=f"{where}.receiverAddress"
                )
        if wallet_id:
            checked_option = wallet_option_check(
                user=user,
                currency=option["currency"],
                network=option["network"],
                wallet_id=wallet_id,
                field=f"{where}.receivingWalletId",
            )
        else:
            checked_option = payment_option_check(
                currency=option["currency"],
                network=option["network"],
                receiver_address=receiver or "",
                field=where,
            )
        network_check(user, checked_option.network, field=f"{where}.network")
        if by_key(user):  # the receiving-address lock binds keys and MCP (no query while it is off)
            named = (
                "addressBookId"
                if option.get("addressBookId")
                else "receivingWalletId"
                if checked_option.receiving_wallet_id
                else "receiverAddress"
            )
            receiver_lock_check(
                user=user,
                by_key=True,
                network=checked_option.network,
                address=checked_option.receiver_address,
                field=f"{where}.{named}",
            )
        if any(
            (o.currency, o.network, o.method)
            == (checked_option.currency, checked_option.network, checked_option.method)
            for o in checked
        ):
            raise Problem(
                f"{checked_option.currency} on {checked_option.network} ({checked_option.method}) is offered twice.",
                code="duplicate_option",
                field=where,
            )
        checked.append(checked_option)
    with transaction.atomic():
        if key is not None and not key.take():
            return KEY_TAKEN
        if livemode_of(user):  # a pay link accrues its fee: 402 while fees are overdue (test fees never do)
            ledger.ensure_not_blocked(user)
        payment_request = PaymentRequest.objects.create(
            user=user,
            token=secrets.token_urlsafe(TOKEN_BYTES),
            fiat_currency=fiat_currency,
            fiat_amount=fiat_amount,
            options=[o.as_json() for o in checked],
            order_id=order_id or None,
            memo=memo or None,
            return_url=return_url,
            expires_at=now + timedelta(hours=expiry_hours or DEFAULT_EXPIRY_HOURS),
            created_at=now,
            livemode=livemode_of(user),
        )
        if key is not None:
            key.keep(payment_request)
    return payment_request


def _locked(payment_request_id: UUID) -> PaymentRequest:
    # No select_related("draft"): after waiting for the lock, PostgreSQL re-reads the locked
    # row but not the joined one, so a joined draft could be the one from before the wait.
    # `locked.draft` is read after the lock, in its own query.
    return PaymentRequest.objects.select_for_update().get(pk=payment_request_id)


class PaymentInProgress(Conflict):
    default_code = "payment_in_progress"


def payment_request_cancel(*, payment_request: PaymentRequest, now: datetime | None = None) -> PaymentRequest:
    """Open -> Cancelled by its owner; its pending draft is cancelled with it. Refused while
    a payment for it has been seen (it may still confirm)."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(payment_request.id)
        if locked.status != R.OPEN:
            raise Conflict(
                f"A {locked.status} payment request cannot be cancelled.",
                code="cancel_not_allowed",
                extra={"paymentRequestStatus": locked.status},
            )
        draft = locked.draft
        if draft is not None and draft.status in (D.SEEN, D.AMOUNT_MISMATCH):
            raise PaymentInProgress(
                "A payment for this request has been seen; it cannot be cancelled now.",
                extra={"draftId": str(draft.id), "draftStatus": draft.status},
            )
        if draft is not None and draft.status == D.PENDING:
            draft_cancel(draft=draft, now=now)
        locked.status, locked.closed_at = R.CANCELLED, now
        locked.save(update_fields=["status", "closed_at", "updated_at"])
        return locked


def payment_request_expire(*, payment_request_id: UUID, now: datetime | None = None) -> PaymentRequest | None:
    """Open past its expiry -> Expired (payment_request.expired). Safe to call twice. Its
    draft is left alone: a payment already on its way is still matched and marks the
    request Paid."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(payment_request_id)
        if locked.status != R.OPEN or locked.expires_at > now:
            return None
        locked.status, locked.closed_at = R.EXPIRED, now
        locked.save(update_fields=["status", "closed_at", "updated_at"])
        event_record(
            user=locked.user,
            type=EventType.PAYMENT_REQUEST_EXPIRED,
            data=payment_request_event_data(locked, occurred_at=now),
            draft_id=locked.draft_id,
            livemode=locked.livemode,
        )
        return locked


def payment_requests_expire_due(*, now: datetime | None = None, batch: int = 500) -> int:
    """Expire a bounded batch of Open requests past their expiry (the beat task)."""
    now = now or timezone.now()
    due = PaymentRequest.objects.filter(status=R.OPEN, expires_at__lte=now).values_list("id", flat=True)[:batch]
    return sum(1 for pk in list(due) if payment_request_expire(payment_request_id=pk, now=now) is not None)


def payment_request_draft_confirmed(*, draft: Draft, now: datetime) -> None:
    """Registered with the drafts state machine (PaylinksConfig.ready); runs inside the
    transaction that confirms `draft`. A pay link's draft makes its request Paid in that same
    transaction, whatever its state (a late payment after expiry or cancellation still paid it)."""
    if draft.payment_request_id is None:
        return
    payment_request = (
        PaymentRequest.objects.select_for_update(of=("self",))
        .select_related("user")
        .filter(pk=draft.payment_request_id)
        .first()
    )
    if payment_request is None or payment_request.status == R.PAID:
        return
    paid_late = payment_request.status != R.OPEN
    payment_request.status, payment_request.draft = R.PAID, draft
    payment_request.paid_at = payment_request.closed_at = now
    payment_request.save(update_fields=["status", "draft", "paid_at", "closed_at", "updated_at"])
    # The payer paid an earlier choice after switching: the newer pending draft must not be paid too.
    for other in Draft.objects.filter(payment_request_id=payment_request.id, status=D.PENDING).exclude(pk=draft.pk):
        draft_cancel(draft=other, now=now)
    data = payment_request_event_data(payment_request, occurred_at=now, draft=draft, paid_late=paid_late)
    event_record(
        user=payment_request.user,
        type=EventType.PAYMENT_REQUEST_PAID,
        data=data,
        draft_id=draft.id,
        livemode=payment_request.livemode,
    )
    email_enqueue(
        user=payment_request.user,
        kind=email_kinds.PAYMENT_REQUEST_PAID,
        context={"data": data, "memo": payment_request.memo},
        dedup_key=f"payment_request_paid:{payment_request.id}",
        livemode=payment_request.livemode,
    )
    if payment_request.payer_email:
        _receipt_send(payment_request, data, draft)


def _receipt_send(payment_request: PaymentRequest, data: dict[str, Any], draft: Draft) -> None:
    rate: dict[str, Any] | None = None
    if draft.rate is not None and draft.fiat_currency:
        # The rate the amount was priced at, and whether it was live (the bundled table is not).
        rate = {"value": str(draft.rate.normalize()), "currency": draft.currency, "fiat": draft.fiat_currency}
        rate["live"] = quote_is_live(draft)
    profile = merchant_profile_get(user=payment_request.user)
    context = {
        "data": data,
        "memo": payment_request.memo,
        "merchant": merchant_name(payment_request),
        "rate": rate,
        "method": draft.method,
        # The receipt speaks the language the payer read the pay page in.
        "language": payment_request.payer_language,
        # The payer has no account: the receipt reads in the merchant's zone, which it names.
        "timeZone": profile.time_zone,
        "logoUrl": f"{settings.BASE_URL}{profile.logo_url}" if profile.logo_url else None,
        "supportEmail": profile.support_email or None,
        "supportUrl": profile.support_url or None,
        "explorerUrl": explorer_tx_url(network=draft.network, txid=draft.paid_tx_id, method=draft.method),
        "returnUrl": payment_request.return_url,
    }
    email_enqueue(
        to=payment_request.payer_email,
        # A test link's receipt is marked as a test and goes to the account's own address
        # unless the operator allows test emails to customers (notifications.services).
        user=None if payment_request.livemode else payment_request.user,
        kind=email_kinds.PAYMENT_RECEIPT,
        context=context,
        dedup_key=f"payment_receipt:{payment_request.id}",
        livemode=payment_request.livemode,
    )


def merchant_name(payment_request: PaymentRequest) -> str:
    """The name a payer sees: the account's display name when it has one, else the
    deployment's label (PAYMENT_URI_LABEL). Never the owner's email."""
    name = merchant_profile_get(user=payment_request.user).display_name
    return name or settings.PAYMENT_URI_LABEL


# --- Payer side (checkout) ------------------------------------------------------------


class PaymentRequestClosed(Conflict):
    default_code = "payment_request_closed"


def _check_open(payment_request: PaymentRequest, now: datetime) -> None:
    status = payment_request.status
    if status == R.OPEN and payment_request.expires_at <= now:
        status = R.EXPIRED
    if status == R.OPEN:
        return
    # Payer-facing texts: in the payer's language (accounts/languages.py), like the pay page.
    details: dict[str, tuple[str, str]] = {
        R.PAID: (_("This payment request is already paid."), "payment_request_paid"),
        R.EXPIRED: (_("This payment request has expired; ask the merchant for a new link."), "payment_request_expired"),
        R.CANCELLED: (_("The merchant cancelled this payment request."), "payment_request_cancelled"),
    }
    detail, code = details[status]
    raise PaymentRequestClosed(detail, code=code, extra={"paymentRequestStatus": status})


def _option_for(payment_request: PaymentRequest, currency: str, network: str, method: str | None) -> PaymentOption:
    offered = [PaymentOption.from_json(o) for o in payment_request.options]
    found = [o for o in offered if o.currency == currency and o.network == network]
    if method:
        found = [o for o in found if o.method == method]
    if not found:
        option = f"{currency} / {network}" + (f" ({method})" if method else "")
        message = _("Not offered by this request.")
        raise Problem(
            _("This payment request does not offer %(option)s.") % {"option": option},
            code="option_not_offered",
            errors=[
                {"field": "currency", "code": "option_not_offered", "message": message},
                {"field": "network", "code": "option_not_offered", "message": message},
            ],
        )
    return found[0]


def _reusable(draft: Draft | None, option: PaymentOption, now: datetime) -> TypeGuard[Draft]:
    return draft is not None and draft.status == D.PENDING and draft.expires_at > now and option.matches(draft)


def _in_progress(draft: Draft | None) -> None:
    if draft is not None and draft.status in (D.SEEN, D.AMOUNT_MISMATCH):
        raise PaymentInProgress(
            _("A payment for this request has already been seen; wait for it to confirm."),
            extra={"draftStatus": draft.status},
        )


class LinkAddressesSpent(Conflict):
    default_code = "payment_request_unavailable"


def _wallet_addresses_check(payment_request: PaymentRequest, wallet_id: str) -> None:
    """A pay link takes at most PAYLINKS_WALLET_ADDRESSES_PER_LINK of a wallet's addresses (one per
    draft made from its wallet option; checked under the link's row lock): an anonymous payer
    switching options back and forth cannot use up the wallet's gap for the merchant's other drafts."""
    taken = Draft.objects.filter(payment_request_id=payment_request.id, receiving_wallet_id=wallet_id).count()
    if taken >= settings.PAYLINKS_WALLET_ADDRESSES_PER_LINK:
        raise LinkAddressesSpent(
            _("The merchant cannot take payments through this link right now."), code="payment_request_unavailable"
        )


def _draft_request(payment_request: PaymentRequest, option: PaymentOption) -> DraftRequest:
    lightning = option.method == Method.LIGHTNING
    return DraftRequest(
        network=option.network,
        currency=option.currency,
        payment_method=option.method,
        receiver_address=None if lightning else option.receiver_address,
        lightning_address=option.receiver_address if lightning else None,
        receiving_wallet_id=UUID(option.receiving_wallet_id) if option.receiving_wallet_id else None,
        fiat_currency=payment_request.fiat_currency,
        fiat_amount=payment_request.fiat_amount,
        memo=payment_request.memo,
        expiry_hours=settings.PAYLINKS_DRAFT_EXPIRY_HOURS,
    )


def checkout_select(
    *,
    token: str,
    currency: str,
    network: str,
    method: str | None = None,
    language: str = "",
    now: datetime | None = None,
) -> Draft:
    """The payer picks an option: the current pending draft when it is the same option,
    else a new draft (its rate locks now) that replaces the previous pending one. `language`:
    the one the payer reads the pay page in, kept (a refund's claim email is written in it)."""
    now = now or timezone.now()
    payment_request = PaymentRequest.objects.select_related("draft").get(token=token)
    _check_open(payment_request, now)
    option = _option_for(payment_request, currency, network, method)
    if _reusable(payment_request.draft, option, now):
        return payment_request.draft
    _in_progress(payment_request.draft)
    announce = announces_checkout_drafts(user_id=payment_request.user_id)
    origin = Origin.payment_request(payment_request.id, payment_request.order_id, announce=announce)
    owner = mode_set(payment_request.user, livemode=payment_request.livemode)  # a test link makes test drafts
    try:
        # Priced first (rates, a Lightning-address invoice through the outbound guard), outside
        # any transaction; then the request's own row is locked before anything is written.
        request = _draft_request(payment_request, option)
        if option.receiving_wallet_id:  # planned with the wallet's next address standing in
            request = wallet_standin(user=owner, request=request)
        plan = draft_plan_for(request=request, origin=origin, now=now)
        with transaction.atomic():
            locked = _locked(payment_request.id)
            _check_open(locked, now)
            current = locked.draft
            if _reusable(current, option, now):  # another payer chose the same option first
                return current
            _in_progress(current)
            if option.receiving_wallet_id:  # the wallet's next address, under its row lock
                _wallet_addresses_check(locked, option.receiving_wallet_id)
                draft = wallet_draft_write(
                    user=owner, plan=plan, wallet_id=option.receiving_wallet_id, origin=origin, now=now
                )
            else:
                draft = draft_create(user=owner, plan=plan, origin=origin, now=now)
            if current is not None and current.status in (D.PENDING, D.EXPIRED):
                # Left for another option: cancelled, or expired when past its time (a payment may
                # still be on its way, and expired drafts stay watched for the grace window).
                draft_supersede(draft=current, now=now, announce=announce)
            locked.draft = draft
            locked.payer_language = language or locked.payer_language
            locked.save(update_fields=["draft", "payer_language", "updated_at"])
            return draft
    except (FeesOutstanding, GapLimitReached, WalletArchived) as exc:
        # The payer needs no view of the owner's fee balance, nor of the state of their wallet
        # (archived, or its gap of unpaid addresses full: the owner sees it on the wallet).
        raise Conflict(
            _("The merchant cannot take payments through this link right now."), code="payment_request_unavailable"
        ) from exc


def checkout_receipt_request(*, token: str, email: str, language: str = "") -> PaymentRequest:
    """The payer asks for an emailed receipt: sent when the request is paid (now, if it is)."""
    with transaction.atomic():
        payment_request = PaymentRequest.objects.select_for_update().get(token=token)
        if payment_request.status in (R.EXPIRED, R.CANCELLED) and payment_request.draft_id is None:
            _check_open(payment_request, timezone.now())
        payment_request.payer_email = email
        payment_request.payer_language = language  # the receipt is written in it
        payment_request.save(update_fields=["payer_email", "payer_language", "updated_at"])
        if payment_request.status == R.PAID and payment_request.draft is not None:
            draft = payment_request.draft
            data = payment_request_event_data(payment_request, occurred_at=payment_request.paid_at, draft=draft)
            _receipt_send(payment_request, data, draft)
        return payment_request


def pay_link_preference_update(*, user, quiet_checkout_drafts: bool) -> PayLinkPreference:
    preference, _created = PayLinkPreference.objects.update_or_create(
        user=user, defaults={"quiet_checkout_drafts": quiet_checkout_drafts}
    )
    return preference

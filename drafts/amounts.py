"""The unique-amount rule: a matched-by-amount draft's amount is unique among the open drafts
billing the same address and asset, nudged by a few base units when a fiat-priced amount clashes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.models import User
from core.problems import Conflict
from core.sql.rows import Select, writes_in_one_statement
from core.sql.state import in_transaction
from drafts.enums import DraftStatus as S
from drafts.models import OPEN_STATUSES, TUPLE_MATCHED_NETWORKS, Draft
from drafts.planning import DraftPlan
from payments.enums import Method

MAX_NUDGE_BASE_UNITS = 1000
MAX_AMOUNT_PICKS = 25

T = TypeVar("T")


class AmountCollision(Conflict):
    default_code = "amount_collision"


class InvoiceAlreadyAttached(Conflict):
    default_code = "invoice_already_attached"


def _invoice_holder(plan: DraftPlan, *, exclude: UUID | None = None) -> Draft | None:
    """The draft (of any account, not cancelled) that already carries this plan's invoice."""
    if plan.payment_hash is None:
        return None
    holders = Draft.objects.filter(payment_hash=plan.payment_hash).exclude(status=S.CANCELLED).exclude(Q(pk=exclude))
    return holders.only("id", "user_id").first()


def _invoice_attached_problem(holder: Draft, *, user: User) -> InvoiceAlreadyAttached:
    # Name the draft only to its own account: another account's draft ids stay unknown.
    if holder.user_id == user.pk:
        return InvoiceAlreadyAttached(
            f"This invoice is already attached to your draft {holder.id}: one invoice pays one draft.",
            field="bolt11",
            extra={"draftId": str(holder.id)},
        )
    return InvoiceAlreadyAttached(
        "This invoice is already attached to another draft: one invoice pays one draft.", field="bolt11"
    )


def _open_amounts(plan: DraftPlan, *, user: User | None = None, exclude: UUID | None = None) -> QuerySet[Draft]:
    """Open drafts billing near this amount to the same (network, address, asset)."""
    drafts = Draft.objects.filter(
        status__in=OPEN_STATUSES,
        network=plan.asset.network,
        receiver_address=plan.receiver_address,
        currency=plan.asset.currency,
        amount_base_units__gte=plan.amount_base_units,
        amount_base_units__lte=plan.amount_base_units + MAX_NUDGE_BASE_UNITS,
    ).exclude(Q(pk=exclude))
    return drafts.filter(user=user) if user is not None else drafts


# The same look-up as _open_amounts for every account, as a creation makes it: built once.
_OPEN_AMOUNTS_NEAR = Select(
    Draft,
    columns=["amount_base_units"],
    where=[
        ("status", "in", tuple(OPEN_STATUSES)),
        ("network", "="),
        ("receiver_address", "="),
        ("currency", "="),
        ("amount_base_units", ">="),
        ("amount_base_units", "<="),
    ],
)


def _matched_by_amount(plan: DraftPlan) -> bool:
    """Whether a payment to this draft is told apart by its amount, which must then be unique
    among the open drafts to that address (not a Lightning invoice, a tuple-matched network;
    not a receiving wallet's fresh address either: the address tells it apart, the amount stays
    as asked)."""
    return (
        plan.asset.network in TUPLE_MATCHED_NETWORKS
        and plan.method != Method.LIGHTNING
        and plan.receiving_wallet_id is None
    )


def open_amounts_read(plan: DraftPlan, *, nudges: int = MAX_NUDGE_BASE_UNITS) -> tuple[Select, tuple[Any, ...]] | None:
    """The read of the open amounts (of every account) a new draft's may be nudged past, from
    its amount as asked up to `nudges` base units above; None if it keeps its own amount (or,
    an exact draft, is checked by its account's unique index). With `nudges=0` it finds a row
    only when an open draft already bills the amount as asked: a check a write can carry
    (core.sql.rows.insert_then_fetch `unless`)."""
    if not _matched_by_amount(plan) or not plan.fiat_priced:
        return None
    low = plan.amount_base_units
    return _OPEN_AMOUNTS_NEAR, (plan.asset.network, plan.receiver_address, plan.asset.currency, low, low + nudges)


def _taken_amounts(plan: DraftPlan, *, exclude: UUID | None, now: datetime) -> set[int]:
    """The amounts open drafts bill or closed drafts still hold, near this plan's."""
    held = set(_held_amounts(plan, now=now, exclude=exclude).values_list("amount_base_units", flat=True))
    if exclude is not None:
        return held | set(_open_amounts(plan, exclude=exclude).values_list("amount_base_units", flat=True))
    read = open_amounts_read(plan)
    if read is None:  # it keeps its own amount: no open draft's is in its way
        return held
    select, values = read
    return held | {amount for (amount,) in select.rows(*values)}


def free_amount(
    plan: DraftPlan,
    *,
    user: User,
    exclude: UUID | None = None,
    optimistic: bool = False,
    taken: set[int] | None = None,
    now: datetime | None = None,
) -> tuple[int, int]:
    """The amount to bill, so that a payment can be told apart from every other open draft's.

    Exact drafts keep their amount; the same amount in another open draft of the same account,
    or held by one closed within AMOUNT_RESERVATION_DAYS, is a 409 naming it. Another account's
    draft at that amount does not block it (the matcher refuses to guess between accounts;
    docs/decisions.md). Fiat-priced drafts are
    nudged up by the fewest base units that make the amount unique among every account's open
    drafts to that address and the amounts closed drafts there still hold.

    `optimistic` (exact drafts only) skips the look-up and proposes the amount as asked: the
    per-account unique index refuses it if needed, and the caller then asks again without.
    `taken` (fiat-priced drafts) are the open and held amounts when the caller read them already.
    """
    now = now or timezone.now()
    amount = plan.amount_base_units
    if not _matched_by_amount(plan):
        return amount, 0
    if not plan.fiat_priced:
        if optimistic:
            return amount, 0
        clash = _open_amounts(plan, user=user, exclude=exclude).filter(amount_base_units=amount).first()
        if clash is not None:
            raise AmountCollision(
                f"Your open draft {clash.id} already bills exactly this amount to this address; payments could "
                "not be told apart. Change the amount by one base unit or cancel that draft.",
                field="amountSats",
                extra={"openDraftId": str(clash.id)},
            )
        held = _held_clash(plan, user=user, now=now, exclude=exclude)
        if held is not None:
            raise held
        return amount, 0
    if taken is None:
        taken = _taken_amounts(plan, exclude=exclude, now=now)
    for nudge in range(0, MAX_NUDGE_BASE_UNITS + 1):
        if amount + nudge not in taken:
            return amount + nudge, nudge
    raise AmountCollision("Too many open drafts bill nearly this amount to this address.", field="fiatAmount")


def _is_amount_clash(plan: DraftPlan, *, user: User, amount: int | None = None, exclude: UUID | None = None) -> bool:
    """After an IntegrityError: was it the per-account unique amount? (Read anew, so it works on
    every database: SQLite names columns in the error, PostgreSQL the constraint.)"""
    if not _matched_by_amount(plan):
        return False
    return (
        Draft.objects.filter(
            user=user,
            status__in=OPEN_STATUSES,
            network=plan.asset.network,
            receiver_address=plan.receiver_address,
            currency=plan.asset.currency,
            amount_base_units__gte=plan.amount_base_units,
            amount_base_units__lte=(amount or plan.amount_base_units) + MAX_NUDGE_BASE_UNITS,
        )
        .exclude(Q(pk=exclude))
        .exists()
    )


@dataclass(frozen=True)
class AmountTaken:
    """A write's refused result: another open draft took the amount it picked first (the
    per-account unique index refused it; nothing was written). Pick again."""


AMOUNT_TAKEN = AmountTaken()


@contextmanager
def amount_guard(
    plan: DraftPlan, *, user: User, exclude: UUID | None = None, one_statement: bool = False
) -> Iterator[None]:
    """Around one try of picking an amount and writing it (creation or requote): in a
    transaction, undone when a concurrent draft took the same amount between the look-up and
    the INSERT (the unique index refuses it; the error is swallowed here, so the try's result
    stays what the caller set before it: AMOUNT_TAKEN). A try that is `one_statement` (reads,
    then a single statement that writes) needs no transaction where that statement is all or
    nothing by itself: PostgreSQL outside any transaction (inside one, a savepoint keeps the
    caller's transaction usable for a retry). Any other error goes on: an invoice another
    draft carries is a 409 naming it."""
    connection = transaction.get_connection()
    alone = one_statement and writes_in_one_statement(connection) and not in_transaction()
    try:
        with nullcontext() if alone else transaction.atomic():
            yield
    except IntegrityError:
        holder = _invoice_holder(plan, exclude=exclude)
        if holder is not None:
            raise _invoice_attached_problem(holder, user=user) from None
        if not _is_amount_clash(plan, user=user, exclude=exclude):
            raise


def unless_amount_taken(
    plan: DraftPlan,
    *,
    user: User,
    write: Callable[[], T],
    exclude: UUID | None = None,
    one_statement: bool = False,
) -> T | AmountTaken:
    """`write()` (reads, then the writes of one try) under `amount_guard`: its result, or
    AMOUNT_TAKEN when a concurrent draft took the same amount (the try undone)."""
    result: T | AmountTaken = AMOUNT_TAKEN
    with amount_guard(plan, user=user, exclude=exclude, one_statement=one_statement):
        result = write()
    return result


def no_free_amount(field: str) -> AmountCollision:
    """Every try found its amount taken by a concurrent draft."""
    return AmountCollision("Could not find a unique amount for this address; try again.", field=field)


# --- Amounts held after a draft closes ------------------------------------------------------
# A paid, expired or cancelled draft keeps its amount at its address for AMOUNT_RESERVATION_DAYS
# (docs/decisions.md, "One payment, one draft"): a payer who pays it again, or late, pays an
# amount no other draft bills, so the transfer is reported on that draft instead of paying
# another. The unique-amount rule above reads these beside the open amounts.

_CLOSED = (S.CONFIRMED, S.EXPIRED, S.CANCELLED)

_HELD_AMOUNTS_NEAR = Select(
    Draft,
    columns=["amount_base_units"],
    where=[
        ("network", "="),
        ("receiver_address", "="),
        ("currency", "="),
        ("amount_base_units", ">="),
        ("amount_base_units", "<="),
        ("amount_held_until", ">="),
    ],
)

_HELD_BY_ACCOUNT = Select(
    Draft,
    columns=["id"],
    where=[
        ("network", "="),
        ("receiver_address", "="),
        ("currency", "="),
        ("amount_base_units", "="),
        ("amount_held_until", ">="),
        ("user", "="),
        ("status", "=", S.CONFIRMED),
    ],
    limit=1,
)


def amount_hold(draft: Draft, *, to: str, now: datetime) -> None:
    """Called as a draft moves to `to` (before it is saved): a matched-by-amount draft that
    closes holds its amount at its address for AMOUNT_RESERVATION_DAYS from now."""
    if to in _CLOSED and draft.network in TUPLE_MATCHED_NETWORKS and draft.method != Method.LIGHTNING:
        draft.amount_held_until = now + timedelta(days=settings.AMOUNT_RESERVATION_DAYS)


def held_amounts_read(
    plan: DraftPlan, *, user: User, now: datetime, nudges: int = MAX_NUDGE_BASE_UNITS
) -> tuple[Select, tuple[Any, ...]] | None:
    """As `open_amounts_read`, for the amounts closed drafts still hold: a fiat-priced draft's
    (every account's, from its amount up to `nudges` above), or an exact draft's (its own
    account's paid drafts', that amount only; the read finds a row when it is held). None when
    the amount is not matched by amount.

    An exact draft is held back only by a paid (Confirmed) one: a payer may pay that again. An
    unpaid draft that expired or was cancelled does not hold an exact amount against its own
    account, so an exact-amount recurring template's next run is not refused for yesterday's
    unpaid draft; a late payment of it is reported (chainwatch.matching does not guess)."""
    if not _matched_by_amount(plan):
        return None
    low, where = plan.amount_base_units, (plan.asset.network, plan.receiver_address, plan.asset.currency)
    if plan.fiat_priced:
        return _HELD_AMOUNTS_NEAR, (*where, low, low + nudges, now)
    return _HELD_BY_ACCOUNT, (*where, low, now, user.pk)


def _held_amounts(
    plan: DraftPlan, *, now: datetime, user: User | None = None, exclude: UUID | None = None
) -> QuerySet[Draft]:
    drafts = Draft.objects.filter(
        network=plan.asset.network,
        receiver_address=plan.receiver_address,
        currency=plan.asset.currency,
        amount_base_units__gte=plan.amount_base_units,
        amount_base_units__lte=plan.amount_base_units + MAX_NUDGE_BASE_UNITS,
        amount_held_until__gte=now,
    ).exclude(Q(pk=exclude))
    return drafts.filter(user=user) if user is not None else drafts


def _held_clash(plan: DraftPlan, *, user: User, now: datetime, exclude: UUID | None) -> AmountCollision | None:
    amount = plan.amount_base_units
    held = (
        _held_amounts(plan, now=now, user=user, exclude=exclude)
        .filter(amount_base_units=amount, status=S.CONFIRMED)
        .first()
    )
    if held is None or held.amount_held_until is None:  # _held_amounts: held until a time to come
        return None
    return AmountCollision(
        f"Your draft {held.id} was paid exactly this amount at this address, which stays reserved "
        f"for it until {held.amount_held_until.isoformat()} so that a repeated payment can only be its. Change "
        "the amount by one base unit.",
        field="amountSats",
        extra={"heldDraftId": str(held.id), "heldUntil": held.amount_held_until.isoformat()},
    )

"""Reads for drafts."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet
from django.http import Http404
from django.utils import timezone
from eth_utils import to_checksum_address

from accounts.models import User
from accounts.modes import livemode_of, owned
from core.sql.rows import RowReader
from drafts.enums import DraftStatus
from drafts.models import OPEN_STATUSES, Draft
from payments.enums import Method


@dataclass(frozen=True)
class WatchTarget:
    """What a chain watcher needs to know about one draft it follows on its own: a Lightning
    invoice (by its payment hash) or a Solana Pay reference. Addresses are watched as
    `WatchedReceiver`s, one per address and asset."""

    draft_id: UUID | str
    network: str
    currency: str
    method: str
    receiver_address: str | None
    token_address: str | None
    amount_base_units: int
    status: str
    paid_tx_id: str | None
    required_confirmations: int
    solana_reference: str | None
    payment_hash: str | None
    lnurl_verify_url: str | None
    expires_at: datetime
    created_at: datetime


def watched_drafts(*, network: str, now: datetime | None = None) -> QuerySet[Draft]:
    """Open drafts, plus Expired ones inside the late-payment grace window."""
    now = now or timezone.now()
    grace = timedelta(hours=settings.DRAFT_LATE_PAYMENT_GRACE_HOURS)
    return Draft.objects.filter(network=network).filter(
        Q(status__in=OPEN_STATUSES) | Q(status=DraftStatus.EXPIRED, expires_at__gte=now - grace)
    )


def report_window() -> timedelta:
    """How long after its expiry a draft's address (or reference) stays watched for reports:
    a transfer in the first grace window pays the draft late; one in the second, or a second
    payment of a paid draft, is reported unmatched with the draft as candidate (chainwatch.unmatched)."""
    return 2 * timedelta(hours=settings.DRAFT_LATE_PAYMENT_GRACE_HOURS)


def at_address(address: str) -> Q:
    """The drafts billed to `address`, whichever way its letters are cased: as creation stores
    it (payments.addresses: EIP-55 on EVM, the canonical encoding elsewhere), in lower or upper
    case. Spelt out rather than compared case-blind, so the look-up is a range of the drafts'
    (network, receiver_address, ...) indexes, not a scan of every draft of the network."""
    forms = {address, address.lower(), address.upper()}
    if _EVM_ADDRESS.fullmatch(address):
        forms.add(to_checksum_address(address.lower()))
    return Q(receiver_address__in=sorted(forms))


_EVM_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")


def reportable_drafts(*, network: str, now: datetime | None = None) -> QuerySet[Draft]:
    """The watched drafts, plus every other draft (paid, cancelled or long expired) inside the
    report window or still holding its amount (drafts.amounts, AMOUNT_RESERVATION_DAYS), and the
    Confirmed ones whose payment is not final yet (followed for reorgs, FINALITY_DEPTHS)."""
    now = now or timezone.now()
    return Draft.objects.filter(network=network).filter(
        Q(status__in=OPEN_STATUSES)
        | Q(expires_at__gte=now - report_window())
        | Q(amount_held_until__gte=now)
        | Q(status=DraftStatus.CONFIRMED, finalized_at__isnull=True)
    )


@dataclass(frozen=True)
class WatchedReceiver:
    """An address and asset a chain watcher asks its node about: one, however many drafts are
    billed there. A transfer found to it is matched to a draft afterwards, by a look-up of that
    address and amount (chainwatch.matching)."""

    receiver_address: str
    currency: str
    token_address: str | None


def watched_receivers(*, network: str, now: datetime | None = None, reportable: bool = True) -> list[WatchedReceiver]:
    """The distinct (address, currency, token) of the drafts a block watcher looks for (by default
    also of those that can no longer be paid but whose transfers are still reported; see
    `reportable_drafts`; `reportable=False` only the payable ones). Grouped in the database, so a
    pass reads a row per receiving address, not per draft (issue 46: a million open drafts to
    40,000 addresses are 40,000 rows). Lightning invoices are watched by their hash instead."""
    drafts = reportable_drafts if reportable else watched_drafts
    rows = (
        drafts(network=network, now=now)
        .filter(receiver_address__isnull=False)
        .exclude(receiver_address="")
        .exclude(method=Method.LIGHTNING)
        .order_by()  # no ordering column joins the DISTINCT
        .values_list("receiver_address", "currency", "token_address")
        .distinct()
    )
    return [WatchedReceiver(address, currency, token) for address, currency, token in rows if address]


def lightning_targets(*, network: str, now: datetime | None = None) -> list[WatchTarget]:
    """The unpaid Lightning invoices a pass asks about: one target each, as a payment hash is
    its draft's alone."""
    drafts = watched_drafts(network=network, now=now).filter(
        method=Method.LIGHTNING, payment_hash__isnull=False, paid_tx_id__isnull=True
    )
    return _targets(drafts)


def reference_targets(*, network: str, keys: Collection[str], now: datetime | None = None) -> list[WatchTarget]:
    """The drafts (watched or still reported) whose Solana Pay reference is one of `keys`, the
    accounts of the transactions a pass found: the reference tells which draft a transaction
    pays, so only those of transactions in hand are read (the unique index on the reference)."""
    found: list[WatchTarget] = []
    ordered = sorted(set(keys))
    for start in range(0, len(ordered), _KEYS_PER_QUERY):
        chunk = ordered[start : start + _KEYS_PER_QUERY]
        found += _targets(reportable_drafts(network=network, now=now).filter(solana_reference__in=chunk))
    return found


_KEYS_PER_QUERY = 5_000


def _targets(drafts: QuerySet[Draft]) -> list[WatchTarget]:
    # Only the columns a target has, as tuples: no model is built.
    return [WatchTarget(*row) for row in drafts.order_by().values_list(*_TARGET_COLUMNS)]


_TARGET_COLUMNS = ("id", *(f.name for f in fields(WatchTarget)[1:]))


def draft_list(*, user: User, filters: dict[str, Any]) -> QuerySet[Draft]:
    """The account's drafts, newest first, filtered as GET /api/v1/drafts describes."""
    drafts = owned(Draft, user).order_by("-created_at", "-id")
    for name in ("status", "network", "currency"):
        if filters.get(name):
            drafts = drafts.filter(**{name: filters[name]})
    if filters.get("hideSuperseded"):  # drafts a pay link's payer switched away from
        drafts = drafts.filter(superseded_at__isnull=True)
    if filters.get("method"):
        drafts = drafts.filter(method=filters["method"])
    if filters.get("from"):
        drafts = drafts.filter(created_at__gte=filters["from"])
    if filters.get("to"):
        drafts = drafts.filter(created_at__lte=filters["to"])
    if filters.get("q"):
        drafts = drafts.filter(_search(user, filters["q"].strip()))
    return drafts


def _search(user: User, q: str) -> Q:
    """A draft whose id, receiver address or payment transaction (any case) or order id is `q`,
    each read from an index of its own (drafts 0020), or whose memo contains `q` (any case)
    among the account's newest DRAFT_SEARCH_MEMO_WITHIN drafts: a range of the account's list
    index. So a search reads the drafts it finds and at most that many memos, however many
    drafts the account has (docs/decisions.md, Lists)."""
    match = Q(receiver_address__iexact=q) | Q(paid_tx_id__iexact=q) | Q(order_id=q)
    try:
        match |= Q(id=UUID(q))
    except ValueError:
        pass
    memo = Q(memo__icontains=q)
    within = settings.DRAFT_SEARCH_MEMO_WITHIN
    oldest = owned(Draft, user).order_by("-created_at", "-id").values_list("created_at", flat=True)[within - 1 : within]
    for created_at in oldest:  # an account with more drafts: the memos of its newest ones
        memo &= Q(created_at__gte=created_at)
    return match | memo


_DRAFT_OF_ACCOUNT = RowReader(Draft, by=["pk", "user", "livemode"])  # the API's most frequent read, built once


def draft_get(*, user: User, draft_id: UUID | str) -> Draft:
    """One of the account's drafts in the caller's mode; another account's draft (or one of the
    other mode) is as unknown as a missing one."""
    try:
        draft = _DRAFT_OF_ACCOUNT.first(draft_id, user.pk, livemode_of(user))  # as accounts.modes.owned
    except ValidationError:  # not a UUID
        draft = None
    if draft is None:
        raise Http404("No draft matches the given query.")
    return draft

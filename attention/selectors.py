"""What waits for the merchant: the one list the overview, the navigation's count, REST
(`GET /api/v1/attention`), MCP (`get_attention`) and the daily digest show.

Each kind is one read in the caller's mode (accounts.modes), however many items it has:

- payments (drafts): underpaid and overpaid (AmountMismatch: accept or cancel), confirming
  (Seen: wait), reverted (the payment left the chain: a Pending draft may be cancelled, an
  Expired one is shown for ATTENTION_REVERTED_DAYS);
- unmatched transfers (attach one to a draft);
- refunds a customer claimed (approve);
- webhook endpoints disabled after failures (re-enable) or failing now (look);
- API keys that expire within ATTENTION_KEY_EXPIRY_DAYS (rotate).

Sections follow the work they are: a REST or MCP caller sees a section only with its read
scope (`SECTION_SCOPES`); a session sees all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import F, Func, IntegerField, Q, QuerySet, Subquery
from django.utils import timezone

from accounts.models import ApiKey, User
from accounts.modes import livemode_of, owned
from chainwatch.models import UnmatchedTransfer
from chainwatch.unmatched import on_chain_q, unmatched_list
from drafts.enums import DraftStatus
from drafts.models import Draft
from payments.registry import format_amount, get_asset
from refunds.models import Refund, RefundStatus
from webhooks.endpoints import OWNER_DISABLED_REASON
from webhooks.models import Webhook

# The kinds, as REST and MCP name them.
UNDERPAID = "underpaid"
OVERPAID = "overpaid"
CONFIRMING = "confirming"
REVERTED = "reverted"
UNMATCHED_TRANSFER = "unmatchedTransfer"
REFUND_CLAIMED = "refundClaimed"
WEBHOOK_DISABLED = "webhookDisabled"
WEBHOOK_FAILING = "webhookFailing"
API_KEY_EXPIRING = "apiKeyExpiring"
KINDS = (
    UNDERPAID,
    OVERPAID,
    CONFIRMING,
    REVERTED,
    UNMATCHED_TRANSFER,
    REFUND_CLAIMED,
    WEBHOOK_DISABLED,
    WEBHOOK_FAILING,
    API_KEY_EXPIRING,
)

# Sections and the key scope that reads each (a session reads every section).
PAYMENTS, REFUNDS, DEVELOPER = "payments", "refunds", "developer"
SECTION_SCOPES = {PAYMENTS: "drafts:read", REFUNDS: "refunds:read", DEVELOPER: "webhooks:manage"}
ALL_SECTIONS = frozenset(SECTION_SCOPES)

# What the merchant can do about each kind (the dashboard's buttons; REST and MCP name them).
ACTIONS: dict[str, tuple[str, ...]] = {
    UNDERPAID: ("accept", "cancel"),
    OVERPAID: ("accept", "cancel"),
    CONFIRMING: (),
    REVERTED: ("cancel",),
    UNMATCHED_TRANSFER: ("attach",),
    REFUND_CLAIMED: ("approve",),
    WEBHOOK_DISABLED: ("enable",),
    WEBHOOK_FAILING: (),
    API_KEY_EXPIRING: ("rotate",),
}


@dataclass(frozen=True)
class Item:
    kind: str
    object_type: str  # draft, transfer, refund, webhook, apiKey
    id: str
    at: datetime  # since when it waits (a key: when it expires)
    obj: Any  # the row, for pages
    amount: str | None = None
    currency: str | None = None
    network: str | None = None
    label: str | None = None  # a webhook's URL, a key's name

    @property
    def actions(self) -> tuple[str, ...]:
        if self.kind == REVERTED and self.obj.status != DraftStatus.PENDING:
            return ()  # an Expired draft takes no cancel; it is shown for a while
        return ACTIONS[self.kind]


@dataclass(frozen=True)
class Attention:
    items: list[Item] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        found = dict.fromkeys(KINDS, 0)
        for item in self.items:
            found[item.kind] += 1
        return found

    def of(self, *kinds: str) -> list[Item]:
        return [item for item in self.items if item.kind in kinds]

    def __bool__(self) -> bool:
        return bool(self.items)


def sections_for_scopes(scopes: list[str]) -> frozenset[str]:
    return frozenset(section for section, scope in SECTION_SCOPES.items() if scope in scopes)


# --- the reads, one per kind --------------------------------------------------------------------


def _drafts(user: User, now: datetime) -> QuerySet[Draft]:
    reverted = Q(payment_reverted_at__isnull=False, paid_tx_id__isnull=True)
    recent = now - timedelta(days=settings.ATTENTION_REVERTED_DAYS)
    return owned(Draft, user).filter(
        Q(status__in=(DraftStatus.AMOUNT_MISMATCH, DraftStatus.SEEN))
        | (reverted & Q(status=DraftStatus.PENDING))
        | (reverted & Q(status=DraftStatus.EXPIRED, payment_reverted_at__gte=recent)),
        superseded_at__isnull=True,
    )


def _transfers(user: User) -> QuerySet[UnmatchedTransfer]:
    return unmatched_list(user=user, matched=False).filter(on_chain_q("transfer__"))


def _refunds(user: User) -> QuerySet[Refund]:
    return owned(Refund, user).filter(status=RefundStatus.CLAIMED)


def _webhooks(user: User) -> QuerySet[Webhook]:
    failing = Q(active=True, consecutive_failures__gte=settings.ATTENTION_WEBHOOK_FAILURES)
    disabled = Q(active=False) & ~Q(disabled_reason=OWNER_DISABLED_REASON)
    return owned(Webhook, user).filter(failing | disabled)


def _keys(user: User, now: datetime) -> QuerySet[ApiKey]:
    soon = now + timedelta(days=settings.ATTENTION_KEY_EXPIRY_DAYS)
    return ApiKey.objects.filter(
        user=user, livemode=livemode_of(user), revoked_at__isnull=True, expires_at__gt=now, expires_at__lte=soon
    )


def attention_of(user: User, *, sections: frozenset[str] = ALL_SECTIONS, now: datetime | None = None) -> Attention:
    """Everything waiting for the account in the caller's mode, oldest first within each kind;
    at most ATTENTION_ITEMS_PER_KIND of each read."""
    now = now or timezone.now()
    limit = settings.ATTENTION_ITEMS_PER_KIND
    items: list[Item] = []
    if PAYMENTS in sections:
        items += [_draft_item(d) for d in _drafts(user, now).order_by("updated_at", "id")[:limit]]
        items += [_transfer_item(r) for r in _transfers(user).order_by("created_at", "pk")[:limit]]
    if REFUNDS in sections:
        items += [_refund_item(r) for r in _refunds(user).order_by("claimed_at", "id")[:limit]]
    if DEVELOPER in sections:
        items += [_webhook_item(w) for w in _webhooks(user).order_by("created_at", "id")[:limit]]
        items += [_key_item(k) for k in _keys(user, now).order_by("expires_at", "id")[:limit]]
    order = {kind: n for n, kind in enumerate(KINDS)}
    items.sort(key=lambda item: order[item.kind])  # stable: each kind keeps its read's order
    return Attention(items=items)


class _Count(Func):
    function = "COUNT"
    output_field = IntegerField()


def attention_count(user: User, *, now: datetime | None = None) -> int:
    """How many items wait (every section, uncapped): one statement, for the navigation."""
    now = now or timezone.now()

    def counted(queryset: QuerySet) -> Subquery:
        return Subquery(queryset.order_by().annotate(n=_Count(F("pk"))).values("n")[:1])

    row = (
        User.objects.filter(pk=user.pk)
        .annotate(
            a=counted(_drafts(user, now)),
            b=counted(_transfers(user)),
            c=counted(_refunds(user)),
            d=counted(_webhooks(user)),
            e=counted(_keys(user, now)),
        )
        .values_list("a", "b", "c", "d", "e")
        .first()
    )
    return sum(n or 0 for n in row) if row else 0


# --- items ----------------------------------------------------------------------------------------


def _draft_item(draft: Draft) -> Item:
    asset = get_asset(draft.currency, draft.network)
    if draft.status == DraftStatus.AMOUNT_MISMATCH:
        received = draft.received_base_units or 0
        kind = UNDERPAID if received < draft.amount_base_units else OVERPAID
        at = draft.seen_at or draft.updated_at
    elif draft.status == DraftStatus.SEEN:
        kind, at = CONFIRMING, draft.seen_at or draft.updated_at
    else:
        kind, at = REVERTED, draft.payment_reverted_at or draft.updated_at
    return Item(
        kind=kind,
        object_type="draft",
        id=str(draft.id),
        at=at,
        obj=draft,
        amount=format_amount(draft.amount_base_units, asset),
        currency=draft.currency,
        network=draft.network,
    )


def _transfer_item(report: UnmatchedTransfer) -> Item:
    transfer = report.transfer
    return Item(
        kind=UNMATCHED_TRANSFER,
        object_type="transfer",
        id=str(report.id),
        at=report.created_at,
        obj=report,
        amount=format_amount(transfer.amount_base_units, get_asset(transfer.currency, transfer.network)),
        currency=transfer.currency,
        network=transfer.network,
    )


def _refund_item(refund: Refund) -> Item:
    amount = None
    if refund.amount_base_units is not None:
        amount = format_amount(refund.amount_base_units, get_asset(refund.currency, refund.network))
    return Item(
        kind=REFUND_CLAIMED,
        object_type="refund",
        id=str(refund.id),
        at=refund.claimed_at or refund.updated_at,
        obj=refund,
        amount=amount,
        currency=refund.currency,
        network=refund.network,
    )


def _webhook_item(webhook: Webhook) -> Item:
    return Item(
        kind=WEBHOOK_FAILING if webhook.active else WEBHOOK_DISABLED,
        object_type="webhook",
        id=str(webhook.id),
        at=(webhook.last_failure_at if webhook.active else webhook.disabled_at) or webhook.created_at,
        obj=webhook,
        label=webhook.url,
    )


def _key_item(key: ApiKey) -> Item:
    assert key.expires_at is not None  # the read asks for an expiry
    return Item(
        kind=API_KEY_EXPIRING,
        object_type="apiKey",
        id=str(key.id),
        at=key.expires_at,
        obj=key,
        label=key.name or f"{key.prefix}…",
    )

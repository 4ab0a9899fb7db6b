"""The dashboard's lists as exports.ListSpec: what each one lists, how it filters and the columns
of its CSV. Filters use the parameters of the list's REST endpoint where one exists (`status`,
`from`, `to`: days of the account's time zone)."""

from __future__ import annotations

import json
import uuid

from django.utils.translation import gettext_lazy as _

from accounts import teams
from accounts.models import Role
from accounts.modes import livemode_of
from accounts.selectors import api_key_list
from addressbook.models import AddressDirection
from addressbook.selectors import address_book_list
from audit.selectors import audit_entries, audit_entry_json
from chainwatch.unmatched import unmatched_list
from dashboard.exports import ListSpec, local, utc
from dashboard.forms import DraftFilterForm
from dashboard.security import MerchantRequest
from dashboard.templatetags.dashboard import PAY_LINK_STATUSES
from drafts.models import Draft
from drafts.selectors import draft_list
from fees.models import AccruedFee
from paylinks.selectors import payment_request_list
from payments.enums import Network
from payments.registry import format_amount, get_asset
from recurring.selectors import recurring_template_list
from refunds.models import RefundStatus
from refunds.selectors import refund_list
from wallets.services import receiving_wallet_list
from webhooks.models import DeliveryStatus, EventType
from webhooks.selectors import account_delivery_list, event_list, webhook_list

YES_NO = [("true", _("Yes")), ("false", _("No"))]


def draft_filter_form(request: MerchantRequest) -> DraftFilterForm:
    return DraftFilterForm(request.GET or None, livemode=livemode_of(request.user))


def filtered_drafts(request: MerchantRequest):
    form = draft_filter_form(request)
    filters = dict(form.cleaned_data) if form.is_valid() else {}
    filters.pop("from", None), filters.pop("to", None)  # days of the account's zone: exports.ListSpec
    # A pay link's superseded drafts are listed under the pay link, not here, unless asked for.
    filters["hideSuperseded"] = not filters.pop("superseded", False)
    return draft_list(user=request.user, filters={k: v for k, v in filters.items() if v})


def _amount(units, currency: str, network: str) -> str:
    return format_amount(units, get_asset(currency, network)) if units is not None else ""


def _draft_row(draft: Draft) -> list:
    return [
        draft.id, utc(draft.created_at), local(draft.created_at), draft.status, draft.network, draft.currency,
        draft.method, _amount(draft.amount_base_units, draft.currency, draft.network), draft.amount_base_units,
        draft.fiat_currency or "", draft.fiat_amount if draft.fiat_amount is not None else "",
        draft.receiver_address or "", draft.paid_tx_id or "", draft.order_id or "", draft.memo or "",
    ]  # fmt: skip


DRAFTS = ListSpec(
    route="dashboard:drafts",
    filename="drafts",
    header=[
        "id",
        "createdAt",
        "createdAtLocal",
        "status",
        "network",
        "currency",
        "method",
        "amount",
        "amountSats",
        "fiatCurrency",
        "fiatAmount",
        "receiverAddress",
        "paidTxId",
        "orderId",
        "memo",
    ],  # fmt: skip
    base=filtered_drafts,
    row=_draft_row,
    own_filters=True,
)

PAYLINKS = ListSpec(
    route="dashboard:paylinks",
    filename="pay-links",
    header=["id", "createdAt", "createdAtLocal", "status", "fiatAmount", "fiatCurrency", "orderId", "memo", "paidAt"],
    base=lambda request: payment_request_list(user=request.user, filters={}),
    row=lambda p: [
        p.id,
        utc(p.created_at),
        local(p.created_at),
        p.status,
        p.fiat_amount,
        p.fiat_currency,
        p.order_id or "",
        p.memo or "",
        utc(p.paid_at),
    ],  # fmt: skip
    # The merchant's words for them (the model's labels are the payer code's, in English).
    choices={"status": ("status", list(PAY_LINK_STATUSES.items()))},
)

REFUNDS = ListSpec(
    route="dashboard:refunds",
    filename="refunds",
    header=[
        "id",
        "createdAt",
        "createdAtLocal",
        "status",
        "draftId",
        "network",
        "currency",
        "amount",
        "fiatAmount",
        "fiatCurrency",
        "refundAddress",
        "reason",
        "paidAt",
    ],  # fmt: skip
    base=lambda request: refund_list(user=request.user, filters={}),
    row=lambda r: [
        r.id,
        utc(r.created_at),
        local(r.created_at),
        r.status,
        r.draft_id,
        r.network,
        r.currency,
        _amount(r.amount_base_units, r.currency, r.network),
        r.fiat_amount if r.fiat_amount else "",
        r.fiat_currency or "",
        r.refund_address or "",
        r.reason or "",
        utc(r.paid_at),
    ],  # fmt: skip
    choices={"status": ("status", RefundStatus.choices)},
)


def _transfers(request: MerchantRequest):
    # As the page: unmatched transfers unless `matched` says otherwise (true, false, all).
    matched = {"true": True, "false": False}.get(request.GET.get("matched", "false"))
    return unmatched_list(user=request.user, matched=matched)


TRANSFERS = ListSpec(
    route="dashboard:transfers",
    filename="transfers",
    header=[
        "id",
        "createdAt",
        "createdAtLocal",
        "network",
        "currency",
        "amount",
        "txId",
        "toAddress",
        "matchedDraftId",
        "matchedAt",
    ],  # fmt: skip
    base=_transfers,
    row=lambda u: [
        u.id,
        utc(u.created_at),
        local(u.created_at),
        u.transfer.network,
        u.transfer.currency,
        _amount(u.transfer.amount_base_units, u.transfer.currency, u.transfer.network),
        u.transfer.txid,
        u.transfer.receiver_address,
        u.matched_draft_id or "",
        utc(u.matched_at),
    ],  # fmt: skip
    own_filters=True,
)

TEMPLATES = ListSpec(
    route="dashboard:templates",
    filename="recurring",
    header=["id", "createdAt", "name", "interval", "timeZone", "paused", "nextRunAt", "lastRunAt", "lastDraftId"],
    base=lambda request: recurring_template_list(user=request.user),
    row=lambda t: [
        t.id,
        utc(t.created_at),
        t.name,
        t.interval,
        t.time_zone,
        t.paused,
        utc(t.next_run_at),
        utc(t.last_run_at),
        t.last_draft_id or "",
    ],  # fmt: skip
    choices={"paused": ("paused", YES_NO)},
)

ADDRESS_BOOK = ListSpec(
    route="dashboard:address_book",
    filename="address-book",
    header=["id", "createdAt", "label", "network", "address", "direction", "default", "usableFrom"],
    base=lambda request: address_book_list(user=request.user),
    row=lambda e: [
        e.id,
        utc(e.created_at),
        e.label,
        e.network,
        e.address,
        e.direction,
        e.is_default,
        utc(e.usable_from),
    ],  # fmt: skip
    choices={"network": ("network", Network.choices), "direction": ("direction", AddressDirection.choices)},
)

RECEIVING_WALLETS = ListSpec(
    route="dashboard:receiving_wallets",
    filename="receiving-wallets",
    header=["id", "createdAt", "label", "network", "scriptType", "fingerprint", "firstAddress", "nextIndex"],
    base=lambda request: receiving_wallet_list(user=request.user),
    row=lambda w: [
        w.id,
        utc(w.created_at),
        w.label,
        w.network,
        w.script_type,
        w.fingerprint,
        w.first_address,
        w.next_index,
    ],  # fmt: skip
    choices={"network": ("network", Network.choices)},
)

WEBHOOKS = ListSpec(
    route="dashboard:webhooks",
    filename="webhooks",
    header=["id", "createdAt", "url", "events", "active", "consecutiveFailures", "lastFailureAt", "disabledReason"],
    base=lambda request: webhook_list(user=request.user),
    row=lambda w: [
        w.id,
        utc(w.created_at),
        w.url,
        " ".join(w.events) or "*",
        w.active,
        w.consecutive_failures,
        utc(w.last_failure_at),
        w.disabled_reason,
    ],  # fmt: skip
    choices={"active": ("active", YES_NO)},
)

API_KEYS = ListSpec(
    route="dashboard:api_keys",
    filename="api-keys",
    header=["id", "createdAt", "name", "prefix", "mode", "scopes", "expiresAt", "lastUsedAt"],
    base=lambda request: api_key_list(user=request.user).order_by("-created_at"),
    row=lambda k: [
        k.id,
        utc(k.created_at),
        k.name,
        k.prefix,
        "live" if k.livemode else "test",
        " ".join(k.scopes),
        utc(k.expires_at),
        utc(k.last_used_at),
    ],  # fmt: skip
)

TEAM = ListSpec(
    route="dashboard:team",
    filename="team",
    header=["email", "role", "joinedAt"],
    base=lambda request: teams.members_of(organization=request.user),
    row=lambda m: [m.person.email, m.role, utc(m.created_at)],
    choices={"role": ("role", Role.choices)},
)


def _audit_row(entry) -> list:
    row = audit_entry_json(entry)
    actor = row["actor"]
    who = actor.get("email") or (f"key {actor.get('prefix')}" if actor["type"] == "apiKey" else "system")
    return [row["at"], row["action"], who, row["ip"] or "", str(row["changes"])]


AUDIT_LOG = ListSpec(
    route="dashboard:audit_log",
    filename="audit-log",
    header=["at", "action", "actor", "ip", "changes"],
    base=lambda request: audit_entries(organization=request.user, action=request.GET.get("action", "").strip() or None),
    row=_audit_row,
    date_params=("since", "until"),
    own_filters=True,
)


def _fees(request: MerchantRequest):
    if not livemode_of(request.user):  # test fees never accrue
        return AccruedFee.objects.none()
    return AccruedFee.objects.filter(user=request.user).select_related("draft").order_by("-accrued_at")


FEES = ListSpec(
    route="dashboard:fees",
    filename="accrued-fees",
    header=["draftId", "accruedAt", "status", "network", "currency", "fee", "settledAt", "waivedReason"],
    base=_fees,
    row=lambda f: [
        f.draft_id,
        utc(f.accrued_at),
        f.status,
        f.network,
        f.currency,
        _amount(f.fee_base_units, f.currency, f.network),
        utc(f.settled_at),
        f.waived_reason,
    ],  # fmt: skip
    date_field="accrued_at",
    choices={"status": ("status", AccruedFee.Status.choices)},
)


# Event types by their names, as the webhooks page and the payloads write them.
EVENT_TYPES = [(value, value) for value in EventType.values]


def chosen_webhook(request: MerchantRequest) -> uuid.UUID | None:
    """`?webhook=`: one endpoint's deliveries (the link on its page); no id lists them all."""
    try:
        return uuid.UUID(request.GET.get("webhook", ""))
    except ValueError:
        return None


def _deliveries(request: MerchantRequest):
    deliveries = account_delivery_list(user=request.user)
    chosen = chosen_webhook(request)
    return deliveries.filter(webhook_id=chosen) if chosen else deliveries


def _last_attempt(delivery) -> list:
    attempts = list(delivery.attempts.all())  # prefetched, in order
    last = attempts[-1] if attempts else None
    return [last.status_code or "", last.error] if last else ["", ""]


WEBHOOK_DELIVERIES = ListSpec(
    route="dashboard:webhook_deliveries",
    filename="webhook-deliveries",
    header=[
        "id",
        "createdAt",
        "createdAtLocal",
        "webhookId",
        "url",
        "eventId",
        "eventType",
        "status",
        "attempts",
        "deliveredAt",
        "nextAttemptAt",
        "lastStatusCode",
        "lastError",
    ],  # fmt: skip
    base=_deliveries,
    row=lambda d: [
        d.id,
        utc(d.created_at),
        local(d.created_at),
        d.webhook_id,
        d.webhook.url,
        d.event_id,
        d.event.type,
        d.status,
        d.total_attempts,
        utc(d.delivered_at),
        utc(d.next_attempt_at),
        *_last_attempt(d),
    ],  # fmt: skip
    choices={"status": ("status", DeliveryStatus.choices), "type": ("event__type", EVENT_TYPES)},
)

EVENTS = ListSpec(
    route="dashboard:events",
    filename="events",
    header=["id", "createdAt", "createdAtLocal", "type", "objectId", "draftId", "sequence", "data"],
    base=lambda request: event_list(user=request.user, filters={}),
    row=lambda e: [
        e.id,
        utc(e.created_at),
        local(e.created_at),
        e.type,
        e.object_id or "",
        e.draft_id or "",
        e.sequence,
        json.dumps(e.data, sort_keys=True, separators=(",", ":")),
    ],  # fmt: skip
    choices={"type": ("type", EVENT_TYPES)},
)

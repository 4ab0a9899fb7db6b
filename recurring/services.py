"""Writes for recurring templates, and the runs that make their drafts.

A run goes through the one creation door (`draft_create_from_request`, origin = the
template), so it is priced, checked, fee-capped and announced (draft.created carrying
`templateId`) exactly like an API draft.

Missed runs (beat or workers down for days): when the service is back, a template makes
one draft, for its latest due run; the earlier missed runs are skipped and counted
(`skipped_runs`, `skippedRuns` in the API). Making each of them would open several drafts at
once for the same payer, and an exact-amount template could not even do that (two open drafts
billing the same amount to one address are refused as `amount_collision`). A paused template
makes no runs, and resuming it does not make up the paused period either.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.modes import by_key, livemode_of, mode_set, network_check
from addressbook.selectors import (
    address_book_receiver,
    default_receiver,
    default_receiving_wallet,
    draft_body_receiver,
    receiver_lock_check,
)
from core.problems import Problem
from core.wire import json_datetime
from drafts.creation import draft_create, draft_plan_for
from drafts.models import Draft
from drafts.planning import draft_plan
from drafts.requests import DraftRequest, Origin
from drafts.wallets import wallet_draft_write, wallet_standin
from notifications.kinds import RECURRING_RUN_REFUSED
from notifications.services import email_enqueue
from recurring.models import RecurrenceInterval, RecurringTemplate
from recurring.presenters import WORDING, refusal_wording
from recurring.schedule import first_index_at_or_after, run_time, zone_get

logger = logging.getLogger(__name__)

# A Daily template's drafts expire before the next run unless the template says otherwise, so
# an unpaid exact-amount draft does not block the next one (amount_collision).
DAILY_DEFAULT_EXPIRY_HOURS = 23
_TICK = timedelta(microseconds=1)


def _prefixed(problem: Problem, prefix: str) -> Problem:
    errors = [{**e, "field": f"{prefix}{e['field']}" if e.get("field") else prefix.rstrip(".")} for e in problem.errors]
    copy = Problem(
        problem.detail, code=problem.code, status_code=problem.status_code, errors=errors, extra=problem.extra
    )
    return copy


def _draft_request(*, user, draft: dict[str, Any], interval: str, entry_field: str) -> DraftRequest:
    data = dict(draft)
    if data.get("fiatAmount") is not None:
        data["fiatAmount"] = Decimal(str(data["fiatAmount"]))
    if data.get("addressBookId"):
        data["receiverAddress"] = address_book_receiver(
            user=user, entry_id=data["addressBookId"], network=data["network"], field=entry_field
        )
    elif data.get("receivingWalletId"):
        pass  # each run pays the wallet's next address (drafts.wallets)
    elif not data.get("receiverAddress") and not (
        data.get("paymentMethod") == "Lightning" or data.get("bolt11") or data.get("lightningAddress")
    ):  # each run pays the default receiving address the account has then (its wallet's next address)
        wallet_id = default_receiving_wallet(user=user, network=data["network"])
        if wallet_id is not None:
            data["receivingWalletId"] = wallet_id
        else:
            data["receiverAddress"] = default_receiver(user=user, network=data["network"])
    if interval == RecurrenceInterval.DAILY and not data.get("expiryHours"):
        data["expiryHours"] = DAILY_DEFAULT_EXPIRY_HOURS
    return DraftRequest.from_api(data)


def _json_safe(draft: dict[str, Any]) -> dict[str, Any]:
    safe = {}
    for key, value in draft.items():
        if isinstance(value, Decimal):
            value = str(value)
        elif isinstance(value, UUID):
            value = str(value)
        safe[key] = value
    return safe


def recurring_template_create(
    *,
    user,
    interval: str,
    draft: dict[str, Any],
    name: str = "",
    first_run_at: datetime | None = None,
    tz: str = "UTC",
    now: datetime | None = None,
) -> RecurringTemplate:
    """Check the template once now (address, combination, network, amount: the same rules a
    draft meets) so a broken template is a 400 today rather than a refusal at every run.
    `draft` is a validated CreateDraftRequest (API names)."""
    now = now or timezone.now()
    zone_get(tz)
    if draft.get("bolt11"):
        raise Problem(
            "An invoice can be paid once: a recurring Lightning draft needs a Lightning address instead.",
            code="invoice_not_reusable",
            field="draft.bolt11",
        )
    request = _draft_request(user=user, draft=draft, interval=interval, entry_field="draft.addressBookId")
    network_check(user, request.network, field="draft.network")
    if by_key(user):  # the receiving-address lock binds keys and MCP; a run later is the template's own
        pays = draft_body_receiver({**draft, "receiverAddress": request.receiver_address}, prefix="draft.")
        receiver_lock_check(user=user, by_key=True, **pays)
    lightning = (
        request.payment_method == "Lightning" or request.lightning_address or "@" in (request.receiver_address or "")
    )
    if request.receiving_wallet_id is not None:  # checked with the wallet's next address standing in
        try:
            request = wallet_standin(user=user, request=request)
        except Problem as problem:
            raise _prefixed(problem, "draft.") from None
    if not lightning:  # a Lightning address is asked for an invoice only at each run (network I/O)
        try:
            draft_plan(request=request, now=now)
        except Problem as problem:
            raise _prefixed(problem, "draft.") from None
    first = first_run_at or now
    index = 0 if first >= now else first_index_at_or_after(first_run_at=first, interval=interval, tz=tz, moment=now)
    return RecurringTemplate.objects.create(
        user=user,
        name=name or "",
        interval=interval,
        time_zone=tz,
        first_run_at=first,
        draft=_json_safe(draft),
        address_book_entry_id=draft.get("addressBookId"),
        next_run_index=index,
        next_run_at=run_time(first_run_at=first, interval=interval, tz=tz, index=index),
        created_at=now,
        livemode=livemode_of(user),
    )


def _locked(template_id: UUID) -> RecurringTemplate:
    return RecurringTemplate.objects.select_for_update().get(pk=template_id)


def recurring_template_pause(*, template: RecurringTemplate) -> RecurringTemplate:
    with transaction.atomic():
        locked = _locked(template.id)
        locked.paused = True
        locked.save(update_fields=["paused"])
    return locked


def recurring_template_resume(*, template: RecurringTemplate, now: datetime | None = None) -> RecurringTemplate:
    """Runs start again with the first one at or after now; the paused period is not made up."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(template.id)
        if locked.paused:
            _move_to(locked, first_index_at_or_after(**_schedule(locked), moment=now, start=locked.next_run_index))
            locked.paused, locked.claimed_until = False, None
            locked.save()
    return locked


def recurring_template_delete(*, template: RecurringTemplate) -> None:
    """Its drafts stay (they carry the template's id); a run in flight finds it gone and stops."""
    RecurringTemplate.objects.filter(pk=template.pk).delete()


def _schedule(template: RecurringTemplate) -> dict[str, Any]:
    return {"first_run_at": template.first_run_at, "interval": template.interval, "tz": template.time_zone}


def _move_to(template: RecurringTemplate, index: int) -> None:
    template.next_run_index = index
    template.next_run_at = run_time(**_schedule(template), index=index)


# --- Runs -------------------------------------------------------------------------------


def recurring_runs_claim(*, now: datetime, limit: int) -> list[tuple[UUID, int]]:
    """Claim due templates for one lease: (template id, run number) to make. A template
    several runs behind is moved to its latest due run here; the ones before are skipped."""
    lease = now + timedelta(seconds=settings.RECURRING_CLAIM_SECONDS)
    with transaction.atomic():
        due = (
            RecurringTemplate.objects.filter(paused=False, next_run_at__lte=now)
            .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
            .order_by("next_run_at")
            .select_for_update(skip_locked=True)[:limit]
        )
        claimed = []
        for template in due:
            start = template.next_run_index
            after_now = first_index_at_or_after(**_schedule(template), moment=now + _TICK, start=start)
            if after_now - 1 > start:
                _move_to(template, after_now - 1)
                template.skipped_runs += template.next_run_index - start
            template.claimed_until = lease
            template.save()
            claimed.append((template.id, template.next_run_index))
    return claimed


def recurring_template_run(*, template_id: UUID, run_index: int, now: datetime | None = None) -> Draft | None:
    """Make run `run_index` of a claimed template: its draft, or a recorded refusal."""
    now = now or timezone.now()
    template = RecurringTemplate.objects.filter(pk=template_id).select_related("user").first()
    if template is None or template.next_run_index != run_index:
        return None
    run_at = template.next_run_at

    origin = Origin.template(template.id)
    try:
        request = _draft_request(
            user=template.user, draft=template.draft, interval=template.interval, entry_field="addressBookId"
        )
        owner = mode_set(template.user, livemode=template.livemode)  # a test template makes test drafts
        wallet_id = request.receiving_wallet_id
        if wallet_id is not None:  # the wallet's next address stands in until the wallet's lock
            request = wallet_standin(user=owner, request=request)
        plan = draft_plan_for(request=request, origin=origin, now=now)  # network I/O, before the lock
        with transaction.atomic():
            locked = RecurringTemplate.objects.select_for_update().filter(pk=template_id).first()
            if locked is None or locked.next_run_index != run_index or locked.paused:
                return None  # made meanwhile by another worker, paused or deleted
            if wallet_id is not None:
                draft = wallet_draft_write(user=owner, plan=plan, wallet_id=wallet_id, origin=origin, now=now)
            else:
                draft = draft_create(user=owner, plan=plan, origin=origin, now=now)
            _move_to(locked, run_index + 1)
            locked.claimed_until, locked.last_run_at, locked.last_draft_id = None, now, draft.id
            locked.last_refusal = None
            locked.save()
            return draft
    except Problem as problem:
        if problem.status_code >= 500:  # rates or a Lightning server unavailable: try again a bit later
            retry_at = now + timedelta(seconds=settings.RECURRING_RETRY_SECONDS)
            RecurringTemplate.objects.filter(pk=template_id, next_run_index=run_index).update(claimed_until=retry_at)
            logger.warning("Recurring template %s run %s postponed: %s", template_id, run_index, problem.code)
            return None
        _refuse(template_id=template_id, run_index=run_index, run_at=run_at, problem=problem, now=now)
        return None


def _refuse(*, template_id: UUID, run_index: int, run_at: datetime, problem: Problem, now: datetime) -> None:
    """The run cannot make a draft (fees outstanding, an address-book entry changed, ...): it is
    recorded on the template, the owner is told by email, and the schedule moves on."""
    with transaction.atomic():
        locked = RecurringTemplate.objects.select_for_update().select_related("user").filter(pk=template_id).first()
        if locked is None or locked.next_run_index != run_index:
            return
        locked.last_refusal = {
            "code": problem.code,
            "status": problem.status_code,
            "detail": problem.detail,
            "runAt": json_datetime(run_at),
            "at": json_datetime(now),
        }
        wording = refusal_wording(problem)
        if wording is not None:  # worded again in the reader's language (recurring.presenters)
            locked.last_refusal[WORDING] = wording
        locked.refused_runs += 1
        _move_to(locked, run_index + 1)
        locked.claimed_until = None
        locked.save()
        email_enqueue(
            kind=RECURRING_RUN_REFUSED,
            user=locked.user,
            dedup_key=f"recurring-refused:{template_id}:{run_index}",
            livemode=locked.livemode,
            context={
                "templateId": str(template_id),
                "templateName": locked.name or str(template_id),
                "runAt": locked.last_refusal["runAt"],
                "code": problem.code,
                "detail": problem.detail,
                "wording": wording,
            },
        )


def recurring_run_due(*, now: datetime | None = None, limit: int | None = None) -> int:
    """The beat tick: claim due templates and make their runs; a template several runs behind
    is claimed again until it is up to date. Returns the number of runs handled. Safe to run
    in several processes at once."""
    now = now or timezone.now()
    budget = limit or settings.RECURRING_BATCH
    handled = 0
    while handled < budget:
        claimed = recurring_runs_claim(now=now, limit=budget - handled)
        if not claimed:
            break
        for template_id, run_index in claimed:
            try:
                recurring_template_run(template_id=template_id, run_index=run_index, now=now)
            except Exception:  # one broken run must not hold up the others; its lease runs out
                logger.exception("Recurring template %s run %s failed", template_id, run_index)
            handled += 1
    return handled

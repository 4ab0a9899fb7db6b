"""A merchant's webhook endpoints: create, change, rotate the secret, delete, send a test, redeliver
(a delivery, or an event to one or every endpoint)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

import outbound
from accounts.models import User
from accounts.modes import livemode_of
from audit import services as audit
from core.problems import Conflict, NotFound, Problem
from core.wire import json_datetime
from webhooks import signing
from webhooks.models import (
    Delivery,
    DeliveryStatus,
    Event,
    EventType,
    Webhook,
)
from webhooks.services import OPEN_STATES, _enqueue, attempt_lease, event_record


class WebhookUrlNotAllowed(Problem):
    default_code = "webhook_url_not_allowed"


# Said with a refused local URL (plain http, loopback, a private or internal host): the way to
# receive events on a developer's machine without webhooks to it (docs/webhooks.md).
LOCAL_DEVELOPMENT_HINT = (
    "To receive events on your own machine, forward them instead of registering a local URL: "
    "`python manage.py listen --forward-to http://localhost:3000/hook`, or docs/examples/listen.py "
    "with just an API key (docs/webhooks.md, Local development)."
)
_LOCAL_REFUSALS = ("HTTPS", "private", "internal", "loopback")


def _url_check(url: str) -> None:
    try:
        outbound.target_resolve(url)
    except outbound.UrlNotAllowed as exc:
        detail = str(exc)
        if any(word in detail for word in _LOCAL_REFUSALS):
            detail = f"{detail} {LOCAL_DEVELOPMENT_HINT}"
        raise WebhookUrlNotAllowed(detail, field="url") from exc


def webhook_create(*, user: User, url: str, events: list[str] | None) -> Webhook:
    """Register an endpoint. Its URL must be HTTPS and resolve only to public addresses.
    The returned row carries the secret; the API shows it this once."""
    _url_check(url)
    with transaction.atomic():
        webhook = Webhook.objects.create(
            user=user,
            url=url,
            events=sorted(set(events or [])),
            secret=signing.secret_generate(),
            livemode=livemode_of(user),  # gets only the events of objects of its mode (accounts.modes)
        )
        audit.record(organization=user, action="webhook.created", changes=_webhook_changes(webhook))
    return webhook


# Why an endpoint is off when its owner turned it off (not the failures: webhooks.services).
OWNER_DISABLED_REASON = "Disabled by owner."


def _webhook_changes(webhook: Webhook) -> dict[str, Any]:
    return {"webhook": webhook.id, "url": webhook.url, "events": webhook.events, "active": webhook.active}


def webhook_update(
    *,
    webhook: Webhook,
    active: bool | None = None,
    events: list[str] | None = None,
    url: str | None = None,
) -> Webhook:
    """Change the URL or the event filter, or disable / re-enable the endpoint. A new URL
    passes the same check as at registration; deliveries still owed go to it. Re-enabling
    re-checks the URL and sends the deliveries that waited while it was off."""
    # DNS: before the transaction, never while holding the row
    if url is not None:
        _url_check(url)
    elif active is True and not webhook.active:
        _url_check(webhook.url)
    with transaction.atomic():
        webhook = Webhook.objects.select_for_update().get(pk=webhook.pk)
        if url is not None:
            webhook.url = url
        if events is not None:
            webhook.events = sorted(set(events))
        if active is True and not webhook.active:
            webhook.active, webhook.disabled_at, webhook.disabled_reason = True, None, ""
            webhook.consecutive_failures, webhook.last_failure_at = 0, None
            _enqueue("dispatch_due")
        elif active is False and webhook.active:
            webhook.active, webhook.disabled_at, webhook.disabled_reason = False, timezone.now(), OWNER_DISABLED_REASON
        webhook.save()
        audit.record(organization=webhook.user_id, action="webhook.changed", changes=_webhook_changes(webhook))
        return webhook


def webhook_rotate_secret(
    *, webhook: Webhook, overlap_hours: int | None = None, now: datetime | None = None
) -> Webhook:
    """Give the endpoint a new signing secret; the returned row carries it (shown this once).
    For `overlap_hours` (default WEBHOOKS_SECRET_OVERLAP_HOURS) deliveries are signed with
    the replaced secret too, so the receiver can switch without dropping any; 0 retires it
    at once (a leaked secret). A rotation during an overlap retires the older secret."""
    now = now or timezone.now()
    hours = settings.WEBHOOKS_SECRET_OVERLAP_HOURS if overlap_hours is None else overlap_hours
    with transaction.atomic():
        webhook = Webhook.objects.select_for_update().get(pk=webhook.pk)
        if hours > 0:
            webhook.previous_secret, webhook.previous_secret_expires_at = webhook.secret, now + timedelta(hours=hours)
        else:
            webhook.previous_secret, webhook.previous_secret_expires_at = "", None
        webhook.secret = signing.secret_generate()
        webhook.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at"])
        audit.record(
            organization=webhook.user_id,
            action="webhook.secret_rotated",
            changes={"webhook": webhook.id, "overlapHours": hours},
        )
        return webhook


def webhook_delete(*, webhook: Webhook) -> None:
    with transaction.atomic():
        audit.record(organization=webhook.user_id, action="webhook.deleted", changes=_webhook_changes(webhook))
        webhook.delete()


def webhook_send_test(*, webhook: Webhook, now: datetime | None = None) -> Delivery:
    """Record a `test` event and deliver it to this endpoint only."""
    if not webhook.active:
        raise Conflict(_("The endpoint is disabled; re-enable it first."), code="webhook_disabled")
    now = now or timezone.now()
    with transaction.atomic():
        event = event_record(
            user=webhook.user,
            type=EventType.TEST,
            livemode=webhook.livemode,
            data={
                "webhookId": str(webhook.id),
                "message": "This is a test event from the payment drafts service.",
                "occurredAt": json_datetime(now),
            },
        )
        delivery = Delivery.objects.create(webhook=webhook, event=event, next_attempt_at=now)
        _enqueue("dispatch_due")
        return delivery


def delivery_redeliver(*, delivery: Delivery, now: datetime | None = None) -> Delivery:
    """Send a delivery again (same id, so receivers still recognise it), with a fresh round
    of attempts."""
    now = now or timezone.now()
    with transaction.atomic():
        delivery = Delivery.objects.select_for_update().select_related("webhook").get(pk=delivery.pk)
        if not delivery.webhook.active:
            raise Conflict(_("The endpoint is disabled; re-enable it first."), code="webhook_disabled")
        if delivery.attempts.filter(state__in=OPEN_STATES, claimed_at__gte=now - attempt_lease()).exists():
            raise Conflict("An attempt of this delivery is under way.", code="delivery_in_progress")
        delivery.status, delivery.attempt_count = DeliveryStatus.PENDING, 0
        delivery.next_attempt_at, delivery.delivered_at = now, None
        delivery.save()
        _enqueue("dispatch_due")
        return delivery


def event_redeliver(*, event: Event, webhook: Webhook | None = None, now: datetime | None = None) -> list[Delivery]:
    """Send an event again. To one endpoint (`webhook`, of the event's account and mode): its
    delivery with a fresh round of attempts, or a new delivery when it never had one (it was
    registered later, or did not subscribe to the type). To every endpoint that had it: each
    delivery whose endpoint is active and has no attempt under way; 409 when none is."""
    now = now or timezone.now()
    if webhook is not None:
        if webhook.user_id != event.user_id or webhook.livemode != event.livemode:
            raise NotFound("You have no endpoint with this id in the event's mode.", field="webhookId")
        if not webhook.active:
            raise Conflict(
                _("The endpoint is disabled; re-enable it first."), code="webhook_disabled", field="webhookId"
            )
        with transaction.atomic():
            delivery, created = Delivery.objects.get_or_create(
                webhook=webhook, event=event, defaults={"next_attempt_at": now}
            )
            if created:
                _enqueue("dispatch_due", str(webhook.id))
                return [delivery]
        return [delivery_redeliver(delivery=delivery, now=now)]
    redelivered = []
    for delivery in Delivery.objects.filter(event=event, webhook__active=True).select_related("webhook"):
        try:
            redelivered.append(delivery_redeliver(delivery=delivery, now=now))
        except Conflict:  # an attempt is under way: that delivery is going out anyway
            continue
    if not redelivered:
        raise Conflict(
            "No active endpoint had this event without an attempt under way; name one with webhookId.",
            code="nothing_to_redeliver",
        )
    return redelivered

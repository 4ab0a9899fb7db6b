"""A deleted account's endpoints, events and deliveries go (their payloads carry draft data)."""

from __future__ import annotations

from datetime import datetime

from accounts.closure import account_closer
from accounts.models import User
from webhooks.models import Event, Webhook


@account_closer
def webhooks_close_for_account(*, user: User, now: datetime) -> None:
    Webhook.objects.filter(user=user).delete()
    Event.objects.filter(user=user).delete()

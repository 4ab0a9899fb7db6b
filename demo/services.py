"""The demo: anyone may open a draft on a test network, paid to the operator's demo address,
and (with DEMO_SIMULATE_PAYMENTS) watch it pass Seen -> Confirmed within a minute, without a
node or funds.

Demo drafts are ordinary test-mode drafts (accounts.modes) made through the one creation door
(origin = demo), owned by a dedicated system account that cannot sign in. They carry no
platform fee and so never reach the fee ledger. The simulator is a caller of the test helpers
(drafts.simulation), which apply made-up transfers through the same payment-observation door
the chain watchers use, so the draft's status, confirmations and events are exactly what a
real payment would produce.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.modes import mode_set
from core.problems import Problem, ServiceUnavailable
from demo.selectors import demo_drafts, demo_networks, demo_open_draft_count
from drafts.creation import draft_create, draft_plan_for
from drafts.enums import DraftStatus
from drafts.models import Draft
from drafts.requests import DraftRequest, Origin
from drafts.simulation import Outcome, draft_payment_simulate, simulated_tx_id

SIMULATION_BATCH = 200


class DemoBusy(ServiceUnavailable):
    default_code = "demo_busy"


def demo_account():
    """The system account that owns every demo draft (created on first use; no password)."""
    users = get_user_model().objects
    email = settings.DEMO_ACCOUNT_EMAIL
    account = users.filter(email=email).first()
    if account is None:
        try:
            with transaction.atomic():
                account = users.create_user(email, None, is_active=False)
        except IntegrityError:  # created meanwhile by a concurrent request
            account = users.get(email=email)
    if account.is_active or account.has_usable_password():
        # Someone signed up with this address: demo drafts must not become a person's drafts.
        raise ServiceUnavailable(
            "The demo is unavailable: its system account address is taken (set DEMO_ACCOUNT_EMAIL).",
            code="demo_unavailable",
        )
    return account


def _busy() -> DemoBusy:
    return DemoBusy(
        f"The demo has {settings.DEMO_MAX_OPEN_DRAFTS} open drafts, its limit; try again in a few minutes.",
        extra={"maxOpenDemoDrafts": settings.DEMO_MAX_OPEN_DRAFTS},
    )


def demo_draft_create(*, network: str, currency: str, now: datetime | None = None) -> Draft:
    """Open a demo draft: USD-priced (DEMO_AMOUNT_USD), short-lived, on a test network only."""
    now = now or timezone.now()
    if network in settings.MAINNET_NETWORKS:
        raise Problem(
            f"The demo runs on test networks only ({', '.join(settings.TEST_NETWORKS)}): no real funds. "
            f"{network} is a main network.",
            code="demo_test_networks_only",
            field="network",
        )
    offered = {n.network: n for n in demo_networks()}
    if network not in offered:
        raise Problem(
            f"The demo is not offered on {network} here. Offered: {', '.join(offered) or 'none'} "
            "(GET /api/v1/demo/config).",
            code="demo_network_unavailable",
            field="network",
        )
    if demo_open_draft_count() >= settings.DEMO_MAX_OPEN_DRAFTS:
        raise _busy()
    account = mode_set(demo_account(), livemode=False)
    request = DraftRequest(
        network=network,
        currency=currency,
        receiver_address=offered[network].receiver_address,
        fiat_currency="USD",
        fiat_amount=settings.DEMO_AMOUNT_USD,
        expiry_minutes=settings.DEMO_EXPIRY_MINUTES,
        memo="Demo draft (test network, no real funds)",
    )
    plan = draft_plan_for(request=request, origin=Origin.demo(), now=now, user=account)
    with transaction.atomic():
        # Serialised on the demo account's row, so concurrent requests cannot together pass the cap.
        get_user_model().objects.select_for_update().filter(pk=account.pk).first()
        if demo_open_draft_count() >= settings.DEMO_MAX_OPEN_DRAFTS:
            raise _busy()
        return draft_create(user=account, plan=plan, origin=Origin.demo(), now=now)


def demo_payments_simulate(*, now: datetime | None = None) -> int:
    """One step of the simulated chain: a Pending demo draft is paid (Seen, 0 confirmations)
    DEMO_SIMULATE_SEEN_AFTER_SECONDS after creation, then gains a confirmation every
    DEMO_SIMULATE_BLOCK_SECONDS until Confirmed. Only demo drafts; safe to run twice (the door
    ignores what it has already applied). Returns the observations applied."""
    if not settings.DEMO_SIMULATE_PAYMENTS:
        return 0
    now = now or timezone.now()
    applied = 0
    paid_before = now - timedelta(seconds=settings.DEMO_SIMULATE_SEEN_AFTER_SECONDS)
    unpaid = demo_drafts().filter(status=DraftStatus.PENDING, created_at__lte=paid_before, expires_at__gt=now)
    for draft in unpaid.order_by("created_at")[:SIMULATION_BATCH]:
        draft_payment_simulate(draft=draft, outcome=Outcome.EXACT, confirmations=0, now=now)
        applied += 1
    block = timedelta(seconds=settings.DEMO_SIMULATE_BLOCK_SECONDS)
    for draft in demo_drafts().filter(status=DraftStatus.SEEN).order_by("seen_at")[:SIMULATION_BATCH]:
        if draft.paid_tx_id != simulated_tx_id(draft):
            continue  # a real payment to the demo address: the watchers follow it
        confirmations = min(int((now - draft.seen_at) / block), draft.required_confirmations)
        if confirmations <= draft.confirmations:
            continue
        draft_payment_simulate(draft=draft, outcome=Outcome.EXACT, confirmations=confirmations, now=now)
        applied += 1
    return applied

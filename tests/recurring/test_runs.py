"""Runs of recurring templates: the beat tick makes exactly one draft per run, through the
one creation door, on the template's wall clock (month ends, DST), under concurrent ticks,
a worker lost mid-run and a three-day downtime; a blocked account gets a recorded refusal
and an email instead of silence."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.utils.dateparse import parse_datetime

from drafts.models import Draft
from fees.models import AccruedFee
from notifications.services import emails_send_due
from recurring import services
from recurring.models import RecurringTemplate
from recurring.tasks import run_due
from tests.concurrency import run_at_once
from tests.factories import make_draft
from tests.recurring.conftest import usdc_draft
from webhooks.models import Event


def at(text: str):
    return parse_datetime(text)


def make_template(owner, *, interval="Monthly", first="2027-01-31T09:00:00Z", tz="UTC", draft=None, now=None):
    with time_machine.travel(now or at(first) - timedelta(days=1), tick=False):
        return services.recurring_template_create(
            user=owner,
            interval=interval,
            draft=draft or usdc_draft(fiatAmount=Decimal("49.5")),
            name="Rent",
            first_run_at=at(first),
            tz=tz,
        )


def tick_at(moment: str) -> int:
    with time_machine.travel(at(moment), tick=False):
        return run_due()


def run_times(template) -> list[str]:
    drafts = Draft.objects.filter(template_id=template.id).order_by("created_at")
    return [d.created_at.isoformat().replace("+00:00", "Z") for d in drafts]


@pytest.mark.django_db
def test_a_due_run_makes_one_draft_through_the_door_and_draft_created_carries_the_template_id(owner):
    template = make_template(owner)

    assert tick_at("2027-01-31T08:59:59Z") == 0
    assert tick_at("2027-01-31T09:00:10Z") == 1
    assert tick_at("2027-01-31T09:00:40Z") == 0

    draft = Draft.objects.get(template_id=template.id)
    assert (draft.user, draft.origin, draft.network, draft.currency) == (owner, "RecurringTemplate", "Base", "USDC")
    assert draft.fiat_amount == Decimal("49.5") and draft.fee_placement == "Accrued"
    event = Event.objects.get(draft_id=draft.id, type="draft.created")
    assert event.data["templateId"] == str(template.id)
    template.refresh_from_db()
    assert template.last_draft_id == draft.id and template.last_run_at == at("2027-01-31T09:00:10Z")
    assert template.next_run_at == at("2027-02-28T09:00:00Z")


@pytest.mark.django_db
def test_monthly_on_the_31st_clamps_to_month_end_and_keeps_the_31st_afterwards(owner):
    template = make_template(owner, interval="Monthly", first="2027-01-31T09:00:00Z")

    for moment in ("2027-01-31T09:01:00Z", "2027-02-28T09:01:00Z", "2027-03-31T09:01:00Z", "2027-04-30T09:01:00Z"):
        assert tick_at(moment) == 1
    assert tick_at("2027-05-30T09:01:00Z") == 0

    assert run_times(template) == [
        "2027-01-31T09:01:00Z",
        "2027-02-28T09:01:00Z",
        "2027-03-31T09:01:00Z",
        "2027-04-30T09:01:00Z",
    ]
    template.refresh_from_db()
    assert template.next_run_at == at("2027-05-31T09:00:00Z")


@pytest.mark.django_db
def test_monthly_on_the_29th_lands_on_february_29_in_a_leap_year(owner):
    template = make_template(owner, first="2028-01-29T00:00:00Z")
    tick_at("2028-01-29T00:00:05Z")
    template.refresh_from_db()
    assert template.next_run_at == at("2028-02-29T00:00:00Z")


@pytest.mark.django_db
def test_a_daily_run_keeps_its_wall_clock_time_across_the_autumn_dst_change(owner):
    # 09:00 in Stockholm: 07:00 UTC in summer time, 08:00 UTC after 25 Oct 2026.
    template = make_template(owner, interval="Daily", first="2026-10-24T07:00:00Z", tz="Europe/Stockholm")

    assert tick_at("2026-10-24T07:00:05Z") == 1
    assert tick_at("2026-10-25T07:00:05Z") == 0  # only 08:00 local now
    assert tick_at("2026-10-25T08:00:05Z") == 1
    assert tick_at("2026-10-26T08:00:05Z") == 1

    template.refresh_from_db()
    assert template.next_run_at == at("2026-10-27T08:00:00Z")
    assert len(run_times(template)) == 3


@pytest.mark.django_db
def test_a_weekly_run_in_the_hour_skipped_by_spring_dst_runs_once_an_hour_later_on_the_wall_clock(owner):
    # Sunday 02:30 in New York. On 14 March 2027 clocks jump from 02:00 to 03:00: that run is
    # at 03:30 EDT (07:30 UTC), and the week after is back at 02:30 (now 06:30 UTC).
    template = make_template(owner, interval="Weekly", first="2027-03-07T07:30:00Z", tz="America/New_York")

    assert tick_at("2027-03-07T07:30:05Z") == 1
    template.refresh_from_db()
    assert template.next_run_at == at("2027-03-14T07:30:00Z")
    assert tick_at("2027-03-14T07:30:05Z") == 1
    template.refresh_from_db()
    assert template.next_run_at == at("2027-03-21T06:30:00Z")
    assert tick_at("2027-03-21T06:30:05Z") == 1
    assert len(run_times(template)) == 3


@pytest.mark.django_db
def test_after_a_three_day_downtime_one_draft_is_made_for_the_latest_run_and_the_missed_ones_are_counted(owner):
    template = make_template(owner, interval="Daily", first="2027-01-10T09:00:00Z")
    assert tick_at("2027-01-10T09:00:05Z") == 1

    # beat and workers are down from 11 January 08:00 to 13 January 10:00
    assert tick_at("2027-01-13T10:00:00Z") == 1
    assert tick_at("2027-01-13T10:00:30Z") == 0

    template.refresh_from_db()
    assert len(run_times(template)) == 2
    assert template.skipped_runs == 2  # the runs of 11 and 12 January
    assert template.next_run_at == at("2027-01-14T09:00:00Z")
    assert tick_at("2027-01-14T09:00:05Z") == 1


@pytest.mark.django_db
def test_a_daily_exact_amount_template_is_not_blocked_by_yesterdays_unpaid_draft(owner):
    from drafts.tasks import expire_drafts
    from tests.drafts.conftest import ADDRESSES

    draft = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 10_000_000}
    template = make_template(owner, interval="Daily", first="2027-01-10T09:00:00Z", draft=draft)

    tick_at("2027-01-10T09:00:05Z")
    with time_machine.travel(at("2027-01-11T08:01:00Z"), tick=False):
        expire_drafts()
    tick_at("2027-01-11T09:00:05Z")

    template.refresh_from_db()
    assert template.last_refusal is None
    assert len(run_times(template)) == 2


@pytest.mark.django_db
def test_paused_templates_make_no_runs(owner):
    template = make_template(owner, interval="Daily", first="2027-01-10T09:00:00Z")
    services.recurring_template_pause(template=template)

    assert tick_at("2027-01-12T09:00:05Z") == 0
    assert not Draft.objects.exists()


@pytest.mark.django_db
def test_a_blocked_account_gets_its_refusal_recorded_and_an_email_and_the_schedule_moves_on(owner):
    template = make_template(owner, interval="Daily", first="2027-01-10T09:00:00Z")
    paid = make_draft(owner, status="Confirmed", fee_usd=Decimal("30"))
    AccruedFee.objects.create(
        user=owner,
        draft=paid,
        fee_usd=Decimal("30"),
        fee_base_units=30_000_000,
        currency="USDC",
        network="Ethereum",
        accrued_at=at("2027-01-09T00:00:00Z"),
    )

    assert tick_at("2027-01-10T09:00:05Z") == 1
    assert tick_at("2027-01-10T09:00:35Z") == 0
    with time_machine.travel(at("2027-01-10T09:00:40Z"), tick=False):
        emails_send_due()  # the notifications tick (or the on-commit task)

    assert not Draft.objects.filter(template_id=template.id).exists()
    template.refresh_from_db()
    assert template.last_refusal["code"] == "fees_outstanding"
    assert template.last_refusal["status"] == 402
    assert template.last_refusal["runAt"] == "2027-01-10T09:00:00Z"
    assert template.refused_runs == 1
    assert template.next_run_at == at("2027-01-11T09:00:00Z")
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == [owner.email]
    assert "Rent" in mail.outbox[0].subject
    assert "Accrued fees of 30.00 USD must be settled first, on the Fees page." in mail.outbox[0].body
    assert "fees_outstanding" not in mail.outbox[0].body

    # Settled: the next run makes its draft and clears the refusal.
    AccruedFee.objects.update(status="Settled")
    assert tick_at("2027-01-11T09:00:05Z") == 1
    template.refresh_from_db()
    assert template.last_refusal is None and Draft.objects.filter(template_id=template.id).count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_beat_ticks_at_once_make_exactly_one_draft_per_run(owner):
    templates = [make_template(owner, interval="Daily", first="2027-01-10T09:00:00Z") for _ in range(3)]

    with time_machine.travel(at("2027-01-10T09:00:05Z"), tick=False):
        handled = run_at_once(2, run_due)

    assert sum(handled) == 3
    for template in templates:
        assert Draft.objects.filter(template_id=template.id).count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_workers_making_the_same_run_at_once_make_one_draft(owner):
    # Two workers that both believe they hold run 0 (a lease that ran out under a slow worker).
    template = make_template(owner, interval="Daily", first="2027-01-10T09:00:00Z")

    with time_machine.travel(at("2027-01-10T09:00:05Z"), tick=False):
        made = run_at_once(2, lambda: services.recurring_template_run(template_id=template.id, run_index=0))

    assert len([d for d in made if d is not None]) == 1
    assert Draft.objects.filter(template_id=template.id).count() == 1
    template.refresh_from_db()
    assert template.next_run_index == 1


@pytest.mark.django_db
def test_a_run_whose_worker_was_killed_is_made_once_after_its_lease_runs_out(owner, settings):
    template = make_template(owner, interval="Daily", first="2027-01-10T09:00:00Z")
    # A worker claims the run and dies before making it.
    claimed = services.recurring_runs_claim(now=at("2027-01-10T09:00:05Z"), limit=10)
    assert claimed == [(template.id, 0)]

    assert tick_at("2027-01-10T09:00:35Z") == 0  # still leased to the dead worker
    lease_over = at("2027-01-10T09:00:05Z") + timedelta(seconds=settings.RECURRING_CLAIM_SECONDS + 1)
    with time_machine.travel(lease_over, tick=False):
        assert run_due() == 1
        assert run_due() == 0

    assert Draft.objects.filter(template_id=template.id).count() == 1


@pytest.mark.django_db
def test_a_deleted_template_makes_no_more_runs_and_its_drafts_stay(owner):
    template = make_template(owner, interval="Daily", first="2027-01-10T09:00:00Z")
    tick_at("2027-01-10T09:00:05Z")
    services.recurring_template_delete(template=template)

    assert tick_at("2027-01-11T09:00:05Z") == 0
    assert Draft.objects.filter(template_id=template.id).count() == 1
    assert not RecurringTemplate.objects.exists()


def test_the_beat_schedule_runs_the_tick(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["recurring-run-due"]
    assert entry["task"] == "recurring.run_due"
    assert entry["schedule"] == float(settings.RECURRING_INTERVAL_SECONDS)


@pytest.mark.django_db
def test_a_test_templates_refusal_email_is_marked_as_a_test(owner, settings):
    from accounts.modes import mode_set
    from tests.drafts.conftest import ADDRESSES

    sepolia = usdc_draft(network="Sepolia", receiverAddress=ADDRESSES["Sepolia"])
    template = make_template(
        mode_set(owner, livemode=False), interval="Daily", first="2027-01-10T09:00:00Z", draft=sepolia
    )
    assert template.livemode is False
    settings.ENABLED_NETWORKS = [n for n in settings.ENABLED_NETWORKS if n != "Sepolia"]  # the run is refused

    assert tick_at("2027-01-10T09:00:05Z") == 1
    with time_machine.travel(at("2027-01-10T09:00:40Z"), tick=False):
        emails_send_due()
    template.refresh_from_db()
    assert template.refused_runs == 1
    [message] = mail.outbox
    assert message.to == [owner.email] and message.subject.startswith("[TEST] ") and "Rent" in message.subject
    assert message.extra_headers["X-Test-Mode"] == "true"


@pytest.mark.django_db
def test_a_template_naming_a_receiving_wallet_gets_a_fresh_address_at_each_run(owner, settings):
    from wallets.services import receiving_wallet_archive, receiving_wallet_create

    settings.ENABLED_NETWORKS = [*settings.ENABLED_NETWORKS, "Testnet"]
    tpub = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4"
    tpub += "LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"
    wallet = receiving_wallet_create(user=owner, network="Testnet", descriptor=f"wpkh([73c5da0a/84h/1h/0h]{tpub}/0/*)")
    body = {"network": "Testnet", "receivingWalletId": str(wallet.id), "amountSats": 50_000, "singleOutput": True}
    template = make_template(owner, interval="Daily", first="2027-01-01T09:00:00Z", draft=body)
    assert tick_at("2027-01-01T09:00:10Z") == 1
    assert tick_at("2027-01-02T09:00:10Z") == 1
    drafts = Draft.objects.filter(template_id=template.id).order_by("created_at")
    assert [(d.receiver_address, d.derivation_index, d.amount_base_units) for d in drafts] == [
        ("tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl", 0, 50_000),
        ("tb1qd7spv5q28348xl4myc8zmh983w5jx32cjhkn97", 1, 50_000),
    ]
    receiving_wallet_archive(wallet=wallet)
    tick_at("2027-01-03T09:00:10Z")
    template.refresh_from_db()
    assert template.last_refusal["code"] == "wallet_archived" and drafts.count() == 2

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from fees.models import DustWaiver
from fees.services import dust_waiver_claim
from tests.concurrency import run_at_once

NOON = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.mark.django_db
def test_the_daily_allowance_is_honoured_then_fees_accrue(owner, settings):
    settings.FEE_DUST_WAIVERS_PER_DAY = 3
    results = [dust_waiver_claim(user=owner, draft_id=uuid.uuid4(), fee_base_units=300, now=NOON) for _ in range(5)]
    assert results == [True, True, True, False, False]
    assert DustWaiver.objects.filter(user=owner).count() == 3


@pytest.mark.django_db
def test_the_allowance_resets_at_midnight_utc(owner, settings):
    settings.FEE_DUST_WAIVERS_PER_DAY = 1
    late = datetime(2026, 11, 22, 23, 59, 59, tzinfo=UTC)
    assert dust_waiver_claim(user=owner, draft_id=uuid.uuid4(), fee_base_units=1, now=late)
    assert not dust_waiver_claim(user=owner, draft_id=uuid.uuid4(), fee_base_units=1, now=late)
    assert dust_waiver_claim(user=owner, draft_id=uuid.uuid4(), fee_base_units=1, now=late + timedelta(seconds=1))


@pytest.mark.django_db
def test_the_allowance_is_per_account(owner, other_account, settings):
    settings.FEE_DUST_WAIVERS_PER_DAY = 1
    assert dust_waiver_claim(user=owner, draft_id=uuid.uuid4(), fee_base_units=1, now=NOON)
    assert dust_waiver_claim(user=other_account, draft_id=uuid.uuid4(), fee_base_units=1, now=NOON)


@pytest.mark.django_db
def test_claiming_twice_for_one_draft_counts_once(owner, settings):
    settings.FEE_DUST_WAIVERS_PER_DAY = 2
    draft_id = uuid.uuid4()
    assert dust_waiver_claim(user=owner, draft_id=draft_id, fee_base_units=1, now=NOON)
    assert dust_waiver_claim(user=owner, draft_id=draft_id, fee_base_units=1, now=NOON)
    assert DustWaiver.objects.count() == 1


@pytest.mark.django_db
def test_the_default_allowance_is_ten(owner):
    granted = [dust_waiver_claim(user=owner, draft_id=uuid.uuid4(), fee_base_units=1) for _ in range(11)]
    assert granted.count(True) == 10


@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_cannot_exceed_the_allowance(settings):
    from accounts.models import User

    settings.FEE_DUST_WAIVERS_PER_DAY = 3
    user = User.objects.create_user("racer@example.com", "a long passphrase here")
    results = run_at_once(8, lambda: dust_waiver_claim(user=user, draft_id=uuid.uuid4(), fee_base_units=1, now=NOON))
    assert sorted(results) == [False] * 5 + [True] * 3
    assert DustWaiver.objects.filter(user=user).count() == 3

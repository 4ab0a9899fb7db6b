from __future__ import annotations

import uuid
from datetime import UTC, datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from fees.models import DustWaiver


def dust_waiver_claim(*, user, draft_id: uuid.UUID | str, fee_base_units: int, now: datetime | None = None) -> bool:
    """Waive a dust fee while the account's allowance for the UTC day lasts.

    The user row is locked so concurrent claims cannot exceed the allowance. A
    second claim for the same draft returns the first answer without counting twice.
    """
    day = (now or datetime.now(UTC)).astimezone(UTC).date()
    with transaction.atomic():
        get_user_model().objects.select_for_update().only("pk").get(pk=user.pk)
        if DustWaiver.objects.filter(user=user, draft_id=draft_id).exists():
            return True
        if DustWaiver.objects.filter(user=user, day=day).count() >= settings.FEE_DUST_WAIVERS_PER_DAY:
            return False
        DustWaiver.objects.create(user=user, draft_id=draft_id, day=day, fee_base_units=fee_base_units)
        return True


def dust_waivers_left(*, user, now: datetime | None = None) -> int:
    """How many dust fees the account may still have waived today (UTC), claiming none."""
    day = (now or datetime.now(UTC)).astimezone(UTC).date()
    return max(0, settings.FEE_DUST_WAIVERS_PER_DAY - DustWaiver.objects.filter(user=user, day=day).count())

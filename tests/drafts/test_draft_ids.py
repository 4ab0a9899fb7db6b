"""A draft's id follows the time of its creation (core/ids.py): each new one sorts after the ones
made before it, so the primary key's index takes it on its last page instead of a random one;
its short form on pages and in email subjects is its random end."""

from __future__ import annotations

import time
import uuid

from core.ids import short_id
from drafts.models import Draft
from tests.drafts.conftest import ADDRESSES


def test_drafts_created_one_after_another_have_ids_in_the_order_they_were_made(create):
    ids = []
    for n in range(5):
        response = create(
            {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 1_000_000 + n}
        )
        assert response.status_code == 201, response.json()
        ids.append(uuid.UUID(response.json()["id"]))
        time.sleep(0.002)  # the next millisecond at least

    assert {i.version for i in ids} == {7}
    assert ids == sorted(ids)
    # Pages and email subjects show an id's random end: its start is the time, the same for all.
    assert len({short_id(i) for i in ids}) == len(ids)
    assert list(Draft.objects.order_by("id").values_list("id", flat=True)) == ids


def test_ids_made_in_the_same_millisecond_still_differ():
    made = {Draft._meta.pk.get_default() for _ in range(10_000)}
    assert len(made) == 10_000

"""The daily digest: one email a day to an account with something waiting, none when nothing
waits, none when the account turned it off; sent through the email outbox."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core import mail
from django.test import Client

from attention.digest import digests_send
from notifications.services import emails_send_due
from tests.attention.test_attention import paid
from tests.conftest import stepped_up
from tests.factories import make_draft

pytestmark = pytest.mark.django_db

MORNING = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def digests() -> list:
    emails_send_due()
    return [m for m in mail.outbox if "need your attention" in m.subject or "needs your attention" in m.subject]


def test_an_account_with_items_gets_one_digest_a_day(owner, settings):
    settings.ATTENTION_DIGEST_HOUR_UTC = 7
    draft = make_draft(owner)
    paid(draft, received=draft.amount_base_units * 95 // 100)
    with time_machine.travel(MORNING, tick=False) as clock:
        assert digests_send() == 1
        assert digests_send() == 0  # the beat entry runs hourly: once a day
        [email] = digests()
        assert email.to == [owner.email] and "1 thing needs your attention" in email.subject
        assert "Underpaid: 25.000000\u00a0USDC on Ethereum" in email.body
        assert "/dashboard/#attention" in email.body
        clock.shift(timedelta(days=1))
        assert digests_send() == 1  # the next day, still waiting
        assert len(digests()) == 2


def test_no_digest_before_the_hour_nor_when_nothing_waits(owner, settings):
    settings.ATTENTION_DIGEST_HOUR_UTC = 9
    make_draft(owner)  # Pending: nothing to do yet
    with time_machine.travel(MORNING + timedelta(hours=2), tick=False):
        assert digests_send() == 0
    draft = make_draft(owner, amount_base_units=25_000_001)
    paid(draft, received=1)
    with time_machine.travel(MORNING, tick=False):
        assert digests_send() == 0  # 08:00, the digest goes from 09:00
    assert digests() == []


def test_an_account_that_turned_the_digest_off_on_the_notifications_page_gets_none(owner, settings):
    settings.ATTENTION_DIGEST_HOUR_UTC = 7
    draft = make_draft(owner)
    paid(draft, received=draft.amount_base_units * 95 // 100)
    browser = stepped_up(Client(), owner)
    page = browser.get("/dashboard/notifications/").content.decode()
    assert 'name="attentionDigest"' in page
    browser.post("/dashboard/notifications/", {"emailEnabled": "on"})  # the digest box left unticked
    with time_machine.travel(MORNING, tick=False):
        assert digests_send() == 0
    assert digests() == []


def test_the_digest_switch_is_in_the_rest_preferences(api_client):
    assert api_client.get("/api/v1/notification-preferences").json() == {"emailEnabled": True, "attentionDigest": True}
    changed = api_client.patch("/api/v1/notification-preferences", {"attentionDigest": False}, format="json")
    assert changed.json() == {"emailEnabled": True, "attentionDigest": False}


def test_test_items_are_not_in_the_digest(owner, settings):
    from drafts.simulation import draft_payment_simulate

    settings.ATTENTION_DIGEST_HOUR_UTC = 7
    draft_payment_simulate(draft=make_draft(owner, livemode=False, network="Sepolia"), outcome="short", confirmations=0)
    with time_machine.travel(MORNING, tick=False):
        assert digests_send() == 0

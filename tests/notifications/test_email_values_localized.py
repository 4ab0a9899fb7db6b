"""The values in a merchant's email are written as the reader writes them (Babel, the reader's
language, the account's time zone), as in the other merchant emails: a security notice's time
and the times it names, a refused recurring run's time, the daily digest's amounts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core import mail

from accounts.profiles import merchant_profile_update
from accounts.security_links import change_notice
from attention.digest import digests_send
from core.wire import json_datetime
from fees.models import AccruedFee
from notifications.services import emails_send_due
from tests.attention.test_attention import paid
from tests.factories import make_draft
from tests.recurring.test_runs import at, make_template, tick_at

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 29, 15, 4, tzinfo=UTC)  # 16:04 in Berlin
# The same minute as each language writes it, in Europe/Berlin.
WRITTEN = {"en": "Nov 29, 2026, 4:04\u202fPM", "de": "29.11.2026, 16:04", "ja": "2026/11/29 16:04"}
LATER = {"en": "Nov 30, 2026, 4:04\u202fPM", "de": "30.11.2026, 16:04", "ja": "2026/11/30 16:04"}


def reader(owner, language: str) -> None:
    merchant_profile_update(user=owner, changes={"language": language, "time_zone": "Europe/Berlin"})


def sent() -> list:
    emails_send_due()
    return list(mail.outbox)


@pytest.mark.parametrize("language", ["en", "de", "ja"])
def test_a_security_notice_gives_its_times_in_the_readers_language_and_zone(owner, language):
    reader(owner, language)
    with time_machine.travel(NOW, tick=False):
        change_notice(user=owner, notice="address_added", client=None, address="bc1qexample", network="Bitcoin",
                      usable_from=json_datetime(NOW + timedelta(days=1)))  # fmt: skip
        [email] = sent()

    html = email.alternatives[0][0]
    for body in (email.body, html):
        assert WRITTEN[language] in body and "Europe/Berlin" in body  # when it happened
        assert LATER[language] in body  # when the address may be used
        assert "2026-11-29" not in body and "15:04 UTC" not in body


@pytest.mark.parametrize("language", ["de", "ja"])
def test_a_refused_recurring_runs_time_is_in_the_readers_language_and_zone(owner, language):
    reader(owner, language)
    make_template(owner, interval="Daily", first="2027-01-10T09:00:00Z")
    AccruedFee.objects.create(user=owner, draft=make_draft(owner, status="Confirmed", fee_usd=Decimal("30")),
                              fee_usd=Decimal("30"), fee_base_units=30_000_000, currency="USDC", network="Ethereum",
                              accrued_at=at("2027-01-09T00:00:00Z"))  # fmt: skip

    assert tick_at("2027-01-10T09:00:05Z") == 1
    with time_machine.travel(at("2027-01-10T09:00:40Z"), tick=False):
        [email] = sent()

    run = {"de": "10.01.2027, 10:00", "ja": "2027/01/10 10:00"}[language]
    assert run in email.body and run in email.alternatives[0][0]
    assert "2027-01-10T09:00:00Z" not in email.body


def test_the_digests_amounts_are_written_as_the_reader_writes_numbers(owner, settings):
    settings.ATTENTION_DIGEST_HOUR_UTC = 7
    reader(owner, "de")
    draft = make_draft(owner)
    paid(draft, received=draft.amount_base_units * 95 // 100)
    sent()
    mail.outbox.clear()  # the payment's own emails
    with time_machine.travel(datetime(2026, 11, 30, 8, 0, tzinfo=UTC), tick=False):
        assert digests_send() == 1
        [email] = sent()

    for body in (email.body, email.alternatives[0][0]):
        assert "25,000000\u00a0USDC im Netzwerk Ethereum" in body
        assert "25.000000" not in body

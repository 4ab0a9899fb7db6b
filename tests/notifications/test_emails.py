"""The email outbox: a draft's owner is emailed about its events (written with the event,
sent after commit); codes and notices go out through the same door."""

from __future__ import annotations

import email
import socket
import threading
from email import policy

import pytest
from aiosmtpd.controller import Controller
from django.core import mail

from core.ids import short_id
from notifications.models import EmailNotification
from notifications.services import email_enqueue, emails_send_due, notification_preference_update
from tests.factories import draft_payment_observed, make_draft
from tests.webhooks.conftest import record
from webhooks.models import EventType

pytestmark = pytest.mark.django_db


class Inbox:
    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.arrived = threading.Event()

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        self.messages.append(email.message_from_bytes(envelope.content, policy=policy.default))
        self.arrived.set()
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp_server(settings):
    inbox = Inbox()
    with socket.socket() as probe:  # aiosmtpd needs a fixed port: take a free one
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    yield inbox
    controller.stop()


def test_a_confirmed_draft_sends_its_owner_one_email_over_smtp(smtp_server, owner):
    draft = make_draft(owner, order_id="order-7")
    draft_payment_observed(draft_id=draft.id, tx_id="0xfeed", received_base_units=25_000_000, confirmations=12)
    emails_send_due()  # the beat tick (or the on-commit task)
    emails_send_due()  # running it twice sends nothing more

    subjects = [m["Subject"] for m in smtp_server.messages]
    assert sorted(subjects) == sorted(
        [f"Payment seen for draft {short_id(draft.id)}", f"Payment confirmed for draft {short_id(draft.id)}"]
    )
    confirmed = next(m for m in smtp_server.messages if "confirmed" in m["Subject"])
    assert confirmed["To"] == owner.email
    plain = confirmed.get_body(("plain",)).get_content()
    html = confirmed.get_body(("html",)).get_content()
    assert "is confirmed" in plain and "0xfeed" in plain and "order-7" in plain and "25.000000\xa0USDC" in plain
    assert "<strong>confirmed</strong>" in html and "0xfeed" in html
    assert smtp_server.envelopes[0][1] == [owner.email]
    assert set(EmailNotification.objects.values_list("status", flat=True)) == {"Sent"}


@pytest.mark.parametrize(
    ("event_type", "phrase"),
    [
        (EventType.DRAFT_SEEN, "was seen"),
        (EventType.DRAFT_CONFIRMED, "is confirmed"),
        (EventType.DRAFT_AMOUNT_MISMATCH, "different amount"),
        (EventType.DRAFT_EXPIRED, "expired without payment"),
    ],
)
def test_each_notified_event_has_its_own_wording(owner, event_type, phrase):
    record(owner, event_type, {"draftId": "abcdef12-0000", "sentAmount": "1", "sentCurrency": "BTC"})

    emails_send_due()

    [message] = mail.outbox
    assert phrase in message.body
    assert message.alternatives[0][1] == "text/html"


@pytest.mark.parametrize("event_type", [EventType.DRAFT_CREATED, EventType.DRAFT_CANCELLED, EventType.TEST])
def test_created_cancelled_and_test_events_send_no_email(owner, event_type):
    record(owner, event_type, {"draftId": "d"})

    emails_send_due()

    assert mail.outbox == []


def test_an_owner_who_turned_emails_off_gets_none(owner):
    notification_preference_update(user=owner, email_enabled=False)
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    emails_send_due()

    assert mail.outbox == []


def test_an_smtp_failure_keeps_the_email_for_a_later_try(owner, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 1  # nothing listens
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    sent = emails_send_due()

    notification = EmailNotification.objects.get()
    assert sent == 0
    assert notification.status == "Pending" and notification.attempt_count == 1
    assert notification.last_error


def test_an_email_to_an_address_without_an_account_is_sent_from_the_outbox():
    email_enqueue(to="new@example.com", kind="email_code", context={"purpose": "register", "code": "123456"})

    assert emails_send_due() == 1

    [message] = mail.outbox
    assert message.to == ["new@example.com"]
    assert "123456" in message.body and "123456" in message.alternatives[0][0]


def test_a_one_time_code_is_wiped_from_the_outbox_once_sent():
    notification = email_enqueue(
        to="new@example.com", kind="email_code", context={"purpose": "login", "code": "654321"}
    )

    emails_send_due()

    notification.refresh_from_db()
    assert notification.status == "Sent"
    assert notification.context == {}


def test_a_one_time_code_is_wiped_when_its_email_is_given_up(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 1  # nothing listens
    settings.NOTIFICATIONS_EMAIL_MAX_ATTEMPTS = 1
    notification = email_enqueue(to="new@example.com", kind="email_code", context={"purpose": "login", "code": "1"})

    emails_send_due()

    notification.refresh_from_db()
    assert notification.status == "Failed" and notification.context == {}


def test_security_notices_go_out_even_when_draft_emails_are_off(owner):
    notification_preference_update(user=owner, email_enabled=False)

    email_enqueue(user=owner, kind="security_notice", context={"notice": "password_changed"})
    emails_send_due()

    [message] = mail.outbox
    assert message.to == [owner.email]


def test_the_same_dedup_key_writes_one_email(owner):
    first = email_enqueue(user=owner, kind="security_notice", context={"notice": "lockout"}, dedup_key="k1")
    second = email_enqueue(user=owner, kind="security_notice", context={"notice": "lockout"}, dedup_key="k1")

    assert first is not None and second is None
    assert EmailNotification.objects.count() == 1


def test_an_unknown_kind_is_a_programming_error(owner):
    with pytest.raises(ValueError, match="Unknown email kind"):
        email_enqueue(user=owner, kind="newsletter", context={})


def test_an_email_rolls_back_with_the_change_that_caused_it(owner):
    from django.db import transaction

    with pytest.raises(ZeroDivisionError), transaction.atomic():
        email_enqueue(user=owner, kind="security_notice", context={"notice": "lockout"})
        1 / 0  # noqa: B018

    assert not EmailNotification.objects.exists()

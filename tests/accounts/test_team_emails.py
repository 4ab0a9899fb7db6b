"""An organization's emails go to the members whose role cares about them, each rendered in the
member's own language (the language of their own account's profile) when the dashboard is
offered in it (DASHBOARD_LANGUAGES), else in English."""

from __future__ import annotations

import uuid

import pytest
from django.core import mail

from accounts.models import Membership, MerchantProfile, Role, User
from notifications import kinds
from notifications.services import email_enqueue, emails_send_due

pytestmark = pytest.mark.django_db


def _person(label: str, language: str) -> User:
    person = User.objects.create_user(f"{label}-{uuid.uuid4().hex[:6]}@example.com", "a long enough passphrase")
    MerchantProfile.objects.create(user=person, language=language)
    return person


@pytest.fixture(autouse=True)
def dashboard_languages(settings):
    # German and French offered on the dashboard, so its people read their email in them.
    settings.DASHBOARD_LANGUAGES = ["en", "de", "fr"]


@pytest.fixture
def team(owner):
    developer, support = _person("dev", "de"), _person("support", "fr")
    Membership.objects.create(organization=owner, person=developer, role=Role.DEVELOPER)
    Membership.objects.create(organization=owner, person=support, role=Role.SUPPORT)
    return owner, developer, support


def _sent() -> dict[str, str]:
    """Who got what was sent: address -> the Content-Language it was rendered in."""
    emails_send_due()
    return {message.to[0]: message.extra_headers["Content-Language"] for message in mail.outbox}


def test_a_disabled_webhook_reaches_the_developer_and_owner_not_support(team):
    owner, developer, support = team
    webhook_id = uuid.uuid4()
    # As webhooks.services sends it when an endpoint is disabled.
    email_enqueue(
        user=owner,
        kind=kinds.WEBHOOK_DISABLED,
        context={"url": "https://example.com/hook", "webhookId": str(webhook_id), "failures": 10},
    )
    sent = _sent()
    assert sent == {owner.email: "en", developer.email: "de"}
    assert all(str(webhook_id) in message.body for message in mail.outbox)


def test_a_refund_to_approve_reaches_support_and_owner_not_the_developer(team):
    owner, developer, support = team
    refund_id = str(uuid.uuid4())
    # As refunds.services sends it when a customer claims a refund (it waits for approval).
    email_enqueue(
        user=owner,
        kind=kinds.REFUND_CLAIMED,
        context={"data": {"refundId": refund_id}, "reason": "broken"},
        dedup_key=f"refund_claimed:{refund_id}",
    )
    # Written once per member: the same claim does not email anyone twice.
    email_enqueue(
        user=owner,
        kind=kinds.REFUND_CLAIMED,
        context={"data": {"refundId": refund_id}, "reason": "broken"},
        dedup_key=f"refund_claimed:{refund_id}",
    )
    sent = _sent()
    assert sent == {owner.email: "en", support.email: "fr"}
    assert len(mail.outbox) == 2


def test_an_amount_mismatch_reaches_who_handles_money_with_times_in_their_language(team):
    """Merchant email texts are English today; what they show (times, amounts) is written in
    the reader's language, and the email says which language it speaks."""
    owner, developer, support = team
    email_enqueue(
        user=owner,
        kind=kinds.DRAFT_EVENT,
        context={
            "event": "draft.amount_mismatch",
            "data": {"draftId": "0123456789abcdef", "occurredAt": "2026-11-25T20:27:39Z", "network": "bitcoin"},
        },
        dedup_key="event:mismatch-1",
    )
    assert _sent() == {owner.email: "en", support.email: "fr"}
    bodies = {message.to[0]: message.body for message in mail.outbox}
    assert "Nov 25, 2026" in bodies[owner.email]
    assert "25 nov. 2026" in bodies[support.email]


def test_a_member_whose_language_the_dashboard_is_not_offered_in_reads_english(team, settings):
    owner, developer, support = team
    settings.DASHBOARD_LANGUAGES = ["en", "de"]
    email_enqueue(
        user=owner,
        kind=kinds.REFUND_CLAIMED,
        context={"data": {"refundId": str(uuid.uuid4())}, "reason": "broken"},
    )
    assert _sent() == {owner.email: "en", support.email: "en"}


def test_an_email_to_the_account_itself_reads_in_its_language(owner, settings):
    MerchantProfile.objects.update_or_create(user=owner, defaults={"language": "de"})
    email_enqueue(user=owner, kind=kinds.SECURITY_NOTICE, context={"notice": "password_changed"})
    assert _sent() == {owner.email: "de"}
    mail.outbox.clear()
    settings.DASHBOARD_LANGUAGES = ["en"]
    email_enqueue(user=owner, kind=kinds.SECURITY_NOTICE, context={"notice": "password_changed"})
    assert _sent() == {owner.email: "en"}


def test_an_account_alone_still_gets_its_email_at_its_own_address(owner):
    email_enqueue(
        user=owner, kind=kinds.WEBHOOK_DISABLED, context={"url": "https://e.com", "webhookId": "x", "failures": 3}
    )
    assert _sent() == {owner.email: "en"}

"""Deleting an account: only right after signing in; keys stop at once, webhooks go, open
drafts are cancelled, confirmed drafts stay for the books without personal data."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import MerchantProfile, User
from accounts.profiles import merchant_profile_update
from drafts.enums import DraftStatus
from drafts.models import Draft
from notifications.services import emails_send_due
from tests.accounts.conftest import PASSWORD, csrf_call, csrf_post, sign_in
from tests.factories import make_draft
from webhooks.models import Event, Webhook

pytestmark = pytest.mark.django_db


def test_deletion_needs_a_sign_in_within_the_last_five_minutes(registered):
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        stale = csrf_call(registered, "delete", "/api/v1/auth/account")

    assert stale.status_code == 403 and stale.json()["code"] == "reauthentication_required"
    assert User.objects.filter(email="merchant@example.com", is_active=True).exists()


def test_an_api_key_cannot_delete_the_account(api_client):
    response = api_client.delete("/api/v1/auth/account")

    assert response.status_code == 403 and response.json()["code"] == "session_required"


def test_deleting_revokes_keys_and_webhooks_cancels_open_drafts_and_keeps_confirmed_ones_without_personal_data(
    registered,
):
    user = User.objects.get(email="merchant@example.com")
    merchant_profile_update(user=user, changes={"display_name": "Alice's Shop", "support_email": "alice@example.com"})
    key = csrf_post(registered, "/api/v1/api-keys", {"name": "ci", "scopes": ["drafts:read"]}).json()["key"]
    Webhook.objects.create(user=user, url="https://hooks.example.com/", secret="whsec_x")
    open_draft = make_draft(user, memo="Invoice for Alice Smith", order_id="order-1")
    confirmed = make_draft(
        user,
        memo="Invoice for Bob Jones",
        order_id="order-2",
        sender_address="0x1111111111111111111111111111111111111111",
        status=DraftStatus.CONFIRMED,
        paid_tx_id="0xfeed",
    )
    mail.outbox.clear()

    response = csrf_call(registered, "delete", "/api/v1/auth/account")

    assert response.status_code == 200 and response.json()["status"] == "accountDeleted"
    open_draft.refresh_from_db()
    confirmed.refresh_from_db()
    assert open_draft.status == DraftStatus.CANCELLED
    assert confirmed.status == DraftStatus.CONFIRMED and confirmed.paid_tx_id == "0xfeed"
    assert confirmed.amount_base_units == 25_000_000 and confirmed.receiver_address
    assert (confirmed.memo, confirmed.order_id, confirmed.sender_address) == (None, None, None)
    assert not Webhook.objects.filter(user=user).exists() and not Event.objects.filter(user=user).exists()
    bearer = APIClient()
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert bearer.get("/api/v1/auth/me").status_code == 401
    assert registered.get("/api/v1/auth/me").status_code in (401, 403)
    user.refresh_from_db()
    assert user.email.endswith("@deleted.invalid") and not user.is_active and not user.has_usable_password()
    assert Draft.objects.filter(user=user).count() == 2
    assert not MerchantProfile.objects.filter(user=user).exists()  # what payers saw of the account
    emails_send_due()
    assert [(m.to, m.subject) for m in mail.outbox] == [(["merchant@example.com"], "Your account was deleted")]


def test_a_deleted_account_cannot_sign_in_and_its_address_can_register_again(registered):
    csrf_call(registered, "delete", "/api/v1/auth/account")

    refused = APIClient().post(
        "/api/v1/auth/password/login", {"email": "merchant@example.com", "password": PASSWORD}, format="json"
    )

    assert refused.status_code == 401
    from tests.accounts.conftest import register

    register(APIClient(), "merchant@example.com")
    assert User.objects.filter(email="merchant@example.com", is_active=True).count() == 1


def test_other_sessions_of_a_deleted_account_end(registered):
    other = APIClient(enforce_csrf_checks=True)
    sign_in(other, "merchant@example.com")

    csrf_call(registered, "delete", "/api/v1/auth/account")

    assert other.get("/api/v1/auth/me").status_code in (401, 403)

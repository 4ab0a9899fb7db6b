"""Refunds in a team: an invited support member approves a refund up to the limit an owner
sets and is refused above it; approving is in the organization's audit log."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from rest_framework.test import APIClient

from accounts.models import Membership, Role, User
from accounts.teams import ORGANIZATION_SESSION_KEY
from audit.models import AuditEntry
from notifications.services import emails_send_due
from tests.refunds.conftest import CUSTOMER

pytestmark = pytest.mark.django_db


def test_an_approved_refund_is_recorded(api_client, anon_client, paid_draft, issue, owner):
    refund = issue(paid_draft(), full=True).json()
    token = refund["claimUrl"].rsplit("/", 1)[1]
    anon_client.post(f"/api/v1/refund-claims/{token}", {"refundAddress": CUSTOMER["Ethereum"]}, format="json")
    approved = api_client.post(f"/api/v1/refunds/{refund['id']}/approve").json()
    entry = AuditEntry.objects.get(organization=owner, action="refund.approved")
    assert entry.actor_key_id is not None and entry.actor_person_id is None
    assert entry.changes == {
        "refund": refund["id"],
        "payoutDraft": approved["payout"]["draftId"],
        "amountBaseUnits": 25_000_000,
    }


def _claimed(issue, anon_client, draft) -> dict:
    refund = issue(draft, full=True).json()
    token = refund["claimUrl"].rsplit("/", 1)[1]
    anon_client.post(f"/api/v1/refund-claims/{token}", {"refundAddress": CUSTOMER["Ethereum"]}, format="json")
    return refund


def test_an_invited_support_member_approves_under_the_limit_and_is_refused_above(anon_client, paid_draft, issue, owner):
    boss = APIClient()
    boss.force_login(owner)
    assert (
        boss.post(
            "/api/v1/team/invitations", {"email": "help@example.com", "role": "support"}, format="json"
        ).status_code
        == 200
    )
    emails_send_due()
    token = re.search(r"/account/invitation/([A-Za-z0-9_-]+)", mail.outbox[-1].body).group(1)
    body = {"token": token, "password": "a long enough passphrase"}
    assert APIClient().post("/api/v1/team/invitations/accept", body, format="json").status_code == 200
    support = APIClient()
    support.force_login(User.objects.get(email="help@example.com"))
    session = support.session
    session[ORGANIZATION_SESSION_KEY] = owner.pk
    session.save()
    assert Membership.objects.get(organization=owner, person__email="help@example.com").role == Role.SUPPORT

    refund = _claimed(issue, anon_client, paid_draft())  # 25 USDC
    unset = support.post(f"/api/v1/refunds/{refund['id']}/approve")
    assert unset.status_code == 403 and unset.json()["code"] == "approval_limit_exceeded"  # no limit set: none
    assert support.put("/api/v1/team/refund-limit", {"limitUsd": "100"}, format="json").json()["code"] == (
        "role_required"
    )  # the owner sets it
    assert boss.put("/api/v1/team/refund-limit", {"limitUsd": "10"}, format="json").json() == {"limitUsd": "10.00"}
    above = support.post(f"/api/v1/refunds/{refund['id']}/approve")
    assert above.status_code == 403 and above.json()["code"] == "approval_limit_exceeded"
    assert above.json()["limitUsd"] == "10.00"
    assert boss.put("/api/v1/team/refund-limit", {"limitUsd": "30"}, format="json").status_code == 200
    under = support.post(f"/api/v1/refunds/{refund['id']}/approve")
    assert under.status_code == 200, under.json()
    assert under.json()["status"] == "Approved"
    entry = AuditEntry.objects.get(organization=owner, action="refund.approved")
    assert entry.actor_person_id == User.objects.get(email="help@example.com").pk

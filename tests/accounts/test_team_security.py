"""An organization may require a second factor of all its members (an owner's setting, audit
logged); any member but the last owner may leave, their session moving to their own account."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiKey, Membership, Role, TotpDevice
from accounts.services import api_key_create
from audit.models import AuditEntry
from tests.accounts.teams import member as _member

pytestmark = pytest.mark.django_db


def test_an_owner_requires_a_second_factor_and_members_without_one_are_refused(owner):
    own = APIClient()
    own.force_login(owner)
    developer, developer_person = _member(owner, Role.DEVELOPER)
    support, support_person = _member(owner, Role.SUPPORT)
    TotpDevice.objects.create(user=support_person, name="app", confirmed=True)
    assert developer.get("/api/v1/webhooks").status_code == 200

    # The owner must have one first; an admin may not change it.
    first = own.put("/api/v1/team/second-factor", {"requireSecondFactor": True}, format="json")
    assert first.status_code == 409 and first.json()["code"] == "second_factor_first"
    admin, _admin_person = _member(owner, Role.ADMIN)
    assert admin.put("/api/v1/team/second-factor", {"requireSecondFactor": True}, format="json").status_code == 403
    TotpDevice.objects.create(user=owner, name="app", confirmed=True)
    turned_on = own.put("/api/v1/team/second-factor", {"requireSecondFactor": True}, format="json")
    assert turned_on.status_code == 200 and turned_on.json() == {"requireSecondFactor": True}
    entry = AuditEntry.objects.get(organization_id=owner.pk, action="settings.second_factor_required")
    assert entry.changes == {"requireSecondFactor": [False, True]}

    refused = developer.get("/api/v1/webhooks")
    assert refused.status_code == 403
    assert refused["Content-Type"] == "application/problem+json"
    assert refused.json()["code"] == "second_factor_required"
    assert "/dashboard/security/" in refused.json()["detail"]
    # A browser is sent to the security page to set one up.
    page = developer.get("/dashboard/", HTTP_ACCEPT="text/html")
    assert page.status_code == 302 and page["Location"] == "/dashboard/security/"
    # The security page itself is the person's own: open to them.
    assert developer.get("/dashboard/security/", HTTP_ACCEPT="text/html").status_code == 200
    # A member with a second factor and the owner work as before.
    assert support.get("/api/v1/drafts").status_code == 200
    assert own.get("/api/v1/team/members").status_code == 200
    assert own.get("/api/v1/team/second-factor").json() == {"requireSecondFactor": True}

    # Once the developer sets one up, their next request goes through.
    TotpDevice.objects.create(user=developer_person, name="app", confirmed=True)
    assert developer.get("/api/v1/webhooks").status_code == 200


def test_a_member_leaves_and_their_session_moves_to_their_own_account(owner):
    support, person = _member(owner, Role.SUPPORT)
    key = api_key_create(user=owner, name="theirs", scopes=["drafts:read"], created_by=person)
    left = support.post("/api/v1/team/leave")
    assert left.status_code == 200
    assert left.json() == {"left": str(owner.public_id), "organization": str(person.public_id)}
    assert not Membership.objects.filter(organization=owner, person=person).exists()
    assert ApiKey.objects.get(pk=key.api_key.pk).revoked_at is not None
    assert AuditEntry.objects.filter(organization_id=owner.pk, action="member.left").exists()
    # The same session now works in the person's own account.
    me = support.get("/api/v1/auth/me").json()
    assert me["organizationId"] == str(person.public_id) and me["role"] == "owner"


def test_the_last_owner_cannot_leave_and_no_one_leaves_their_own_account(owner):
    own = APIClient()
    own.force_login(owner)
    refused = own.post("/api/v1/team/leave")
    assert refused.status_code == 409 and refused.json()["code"] == "own_account_owner"
    # An organization whose only owner is a member (its own person demoted is impossible, so
    # the other owner stays next to it): a co-owner leaves, the account's own person cannot.
    co_owner, co_person = _member(owner, Role.OWNER)
    assert co_owner.post("/api/v1/team/leave").status_code == 200
    assert Membership.objects.filter(organization=owner, role=Role.OWNER).count() == 1

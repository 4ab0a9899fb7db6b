"""The team through the REST API: members, invitations by email (a link valid 7 days, used once,
revocable, the address masked until accepted), accepting with an account or creating one, the
last owner, who may make owners."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail
from rest_framework.test import APIClient

from accounts.models import ApiKey, Invitation, Membership, Role, User
from accounts.services import api_key_create
from accounts.teams import ORGANIZATION_SESSION_KEY
from notifications.services import emails_send_due
from tests.accounts.teams import member as _member
from tests.accounts.teams import person as _person

pytestmark = pytest.mark.django_db
LINK = re.compile(r"/account/invitation/([A-Za-z0-9_-]+)")


def _link_sent_to(address: str) -> str:
    emails_send_due()
    for message in reversed(mail.outbox):
        if address in message.to:
            return LINK.search(message.body).group(1)
    raise AssertionError(f"nothing sent to {address}")


def test_an_admin_invites_and_the_invited_person_creates_an_account_by_the_link(owner):
    admin, _ = _member(owner, Role.ADMIN)
    sent = admin.post("/api/v1/team/invitations", {"email": "New.Hire@Example.com", "role": "support"}, format="json")
    assert sent.status_code == 200, sent.content
    token = _link_sent_to("new.hire@example.com")
    pending = admin.get("/api/v1/team/invitations").json()["items"]
    assert [(i["emailHint"], i["role"]) for i in pending] == [("n***@example.com", "support")]
    assert "new.hire" not in str(admin.get("/api/v1/team/members").content)  # not shown before acceptance
    invitation = Invitation.objects.get()
    assert invitation.expires_at - invitation.created_at == timedelta(days=7)
    assert token not in str(Invitation.objects.values_list("token_hash", flat=True)[0])

    accepted = APIClient().post(
        "/api/v1/team/invitations/accept", {"token": token, "password": "a long enough passphrase"}, format="json"
    )
    assert accepted.status_code == 200, accepted.content
    assert accepted.json() == {"organization": str(owner.public_id), "role": "support", "accountCreated": True}
    person = User.objects.get(email="new.hire@example.com")
    assert Membership.objects.get(organization=owner, person=person).role == Role.SUPPORT
    members = {m["email"]: m["role"] for m in admin.get("/api/v1/team/members").json()["items"]}
    assert members["new.hire@example.com"] == "support" and members[owner.email] == "owner"
    again = APIClient().post("/api/v1/team/invitations/accept", {"token": token, "password": "x" * 20}, format="json")
    assert again.status_code == 404 and again.json()["code"] == "invitation_invalid"  # used once


def test_a_signed_in_person_accepts_with_their_account_and_only_their_own(owner):
    invited, stranger = _person("invited"), _person("stranger")
    admin, _ = _member(owner, Role.ADMIN)
    admin.post("/api/v1/team/invitations", {"email": invited.email, "role": "viewer"}, format="json")
    token = _link_sent_to(invited.email)
    wrong = APIClient()
    wrong.force_login(stranger)
    refused = wrong.post("/api/v1/team/invitations/accept", {"token": token}, format="json")
    assert refused.status_code == 403 and refused.json()["code"] == "invitation_other_person"
    signed_out = APIClient().post(
        "/api/v1/team/invitations/accept", {"token": token, "password": "y" * 20}, format="json"
    )
    assert signed_out.status_code == 409 and signed_out.json()["code"] == "sign_in_first"
    right = APIClient()
    right.force_login(invited)
    accepted = right.post("/api/v1/team/invitations/accept", {"token": token}, format="json")
    assert accepted.status_code == 200 and accepted.json()["accountCreated"] is False


def test_a_revoked_or_expired_invitation_cannot_be_accepted(owner, settings):
    admin, _ = _member(owner, Role.ADMIN)
    admin.post("/api/v1/team/invitations", {"email": "late@example.com", "role": "viewer"}, format="json")
    token = _link_sent_to("late@example.com")
    invitation = Invitation.objects.get()
    assert admin.delete(f"/api/v1/team/invitations/{invitation.id}").status_code == 200
    assert admin.get("/api/v1/team/invitations").json()["items"] == []
    body = {"token": token, "password": "a long enough passphrase"}
    assert APIClient().post("/api/v1/team/invitations/accept", body, format="json").status_code == 404
    admin.post("/api/v1/team/invitations", {"email": "later@example.com", "role": "viewer"}, format="json")
    token = _link_sent_to("later@example.com")
    Invitation.objects.filter(email="later@example.com").update(expires_at=invitation.created_at)
    body = {"token": token, "password": "a long enough passphrase"}
    assert APIClient().post("/api/v1/team/invitations/accept", body, format="json").status_code == 404


def test_only_an_owner_makes_owners_and_the_last_owner_stays(owner):
    admin, admin_person = _member(owner, Role.ADMIN)
    refused = admin.post("/api/v1/team/invitations", {"email": "boss@example.com", "role": "owner"}, format="json")
    assert refused.status_code == 403 and refused.json()["code"] == "role_required"
    own = APIClient()
    own.force_login(owner)
    removed = own.delete(f"/api/v1/team/members/{owner.public_id}")
    assert removed.status_code == 409 and removed.json()["code"] == "own_account_owner"
    promoted = own.patch(f"/api/v1/team/members/{admin_person.public_id}", {"role": "owner"}, format="json")
    assert promoted.status_code == 200 and promoted.json()["role"] == "owner"
    assert (
        admin.patch(f"/api/v1/team/members/{admin_person.public_id}", {"role": "viewer"}, format="json").json()["role"]
        == "viewer"
    )  # an owner (now) may step down: the account's own person stays an owner


def test_members_and_invitations_need_an_owner_or_admin_session(owner):
    for role in (Role.VIEWER, Role.SUPPORT, Role.DEVELOPER):
        client, _ = _member(owner, role)
        for path in ("/api/v1/team/members", "/api/v1/team/invitations"):
            refused = client.get(path)
            assert refused.status_code == 403 and refused.json()["code"] == "role_required", (role, path)
    keyed = APIClient()
    keyed.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(user=owner, name='k', scopes=['drafts:read']).key}")
    assert keyed.get("/api/v1/team/members").json()["code"] == "session_required"


def test_removing_a_member_through_the_api_stops_their_session_and_keys(owner):
    admin, _ = _member(owner, Role.ADMIN)
    developer, person = _member(owner, Role.DEVELOPER)
    issued = api_key_create(user=owner, name="dev's", scopes=["drafts:read"], created_by=person)
    assert admin.delete(f"/api/v1/team/members/{person.public_id}").status_code == 200
    assert developer.get("/api/v1/drafts").json()["code"] == "not_a_member"
    assert ApiKey.objects.get(pk=issued.api_key.pk).revoked_at is not None


def test_the_emailed_link_opens_a_page_that_joins_the_signed_in_person(owner, client):
    invited = _person("page")
    own = APIClient()
    own.force_login(owner)
    own.post("/api/v1/team/invitations", {"email": invited.email, "role": "developer"}, format="json")
    token = _link_sent_to(invited.email)
    assert client.get(f"/account/invitation/{token}").status_code == 200  # shows it, changes nothing
    assert not Membership.objects.filter(organization=owner, person=invited).exists()
    client.force_login(invited)
    joined = client.post(f"/account/invitation/{token}")
    assert joined.status_code == 302 and joined["Location"].endswith("/dashboard/")
    assert Membership.objects.get(organization=owner, person=invited).role == Role.DEVELOPER
    assert client.session[ORGANIZATION_SESSION_KEY] == owner.pk
    assert client.post(f"/account/invitation/{token}").status_code == 404  # once

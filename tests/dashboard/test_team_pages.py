"""The dashboard's team and audit log pages, and the organization switcher."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from accounts.models import Invitation, Membership, Role, User
from audit.services import record
from tests.accounts.teams import member

pytestmark = pytest.mark.django_db


def test_an_admin_invites_changes_roles_and_removes_members_from_the_team_page(owner):
    admin, _ = _in(owner, Role.ADMIN)
    _, viewer = _in(owner, Role.VIEWER)
    page = admin.get("/dashboard/team")
    assert page.status_code == 200 and viewer.email in page.content.decode()
    admin.post("/dashboard/team", {"email": "someone@example.com", "role": "developer"})
    invitation = Invitation.objects.get(organization=owner)
    assert invitation.role == "developer"
    assert "s***@example.com" in admin.get("/dashboard/team").content.decode()
    assert "someone@example.com" not in admin.get("/dashboard/team").content.decode()
    admin.post(f"/dashboard/team/members/{viewer.public_id}", {"role": "support"})
    assert Membership.objects.get(organization=owner, person=viewer).role == Role.SUPPORT
    admin.post(f"/dashboard/team/members/{viewer.public_id}", {"role": "owner"})  # only an owner makes owners
    assert Membership.objects.get(organization=owner, person=viewer).role == Role.SUPPORT
    admin.post(f"/dashboard/team/members/{viewer.public_id}", {"remove": "1"})
    assert not Membership.objects.filter(organization=owner, person=viewer).exists()
    admin.post(f"/dashboard/team/invitations/{invitation.id}/revoke")
    assert Invitation.objects.get(pk=invitation.pk).revoked_at is not None


def test_the_audit_log_page_filters_and_exports_csv(owner):
    record(organization=owner, action="member.added", changes={"role": "=cmd()"})
    record(organization=owner, action="api_key.created")
    admin, _ = _in(owner, Role.ADMIN)
    page = admin.get("/dashboard/audit-log", {"action": "member."}).content.decode()
    assert "member.added" in page and "api_key.created" not in page
    exported = admin.get("/dashboard/audit-log", {"csv": "1"})
    assert exported["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert rows[0] == ["at", "action", "actor", "ip", "changes"]
    assert [row[1] for row in rows[1:]] == ["api_key.created", "member.added"]
    assert rows[2][4].startswith("{")  # a dict, never a formula
    viewer, _ = _in(owner, Role.VIEWER)
    assert viewer.get("/dashboard/audit-log").status_code == 403


def test_the_switcher_lists_the_persons_organizations(owner):
    client, person = _in(owner, Role.SUPPORT)
    page = client.get("/dashboard/").content.decode()
    assert owner.email in page and person.email in page and 'name="organization"' in page


def _in(organization: User, role: str) -> tuple[Client, User]:
    return member(organization, role, Client)

"""The audit log: an entry for each kind of security- or money-relevant action, with its actor
(person or key), organization, address and what changed; append-only; read by owners and
admins through GET /api/v1/audit-log; kept AUDIT_RETENTION_DAYS."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import Membership, Role, User
from accounts.services import api_key_create
from accounts.teams import member_add, member_remove, member_role_set
from audit.models import AppendOnly, AuditEntry
from audit.services import record
from audit.tasks import audit_purge
from tests.accounts.authenticator import Authenticator
from tests.accounts.conftest import csrf_call, csrf_post, register, sign_in
from tests.accounts.teams import member
from tests.accounts.test_passkeys import ORIGIN
from tests.accounts.test_totp import code_at, setup
from tests.conftest import stepped_up
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.factories import draft_payment_observed, make_draft

pytestmark = pytest.mark.django_db
TPUB = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"


def entries(organization, action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(organization=organization, action=action))


def only(organization, action: str) -> AuditEntry:
    found = entries(organization, action)
    assert len(found) == 1, [e.action for e in AuditEntry.objects.filter(organization=organization)]
    return found[0]


def keyed(user: User, *, created_by: User | None = None) -> tuple[APIClient, object]:
    issued = api_key_create(
        user=user,
        name="k",
        scopes=[
            "drafts:read",
            "drafts:write",
            "wallets:write",
            "addressbook:manage",
            "webhooks:manage",
            "paylinks:write",
        ],
        created_by=created_by,
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")
    return client, issued.api_key


def test_a_sign_in_is_recorded_with_the_person_and_address(browser):
    register(browser, "audited@example.com")
    user = User.objects.get(email="audited@example.com")
    AuditEntry.objects.filter(organization=user).purge()
    sign_in(APIClient(), "audited@example.com")
    entry = only(user, "session.signed_in")
    assert (entry.actor_person_id, entry.actor_key_id, entry.ip) == (user.pk, None, "127.0.0.1")
    assert entry.changes == {"method": "password"}


def test_turning_the_authenticator_app_on_and_off_is_recorded(registered):
    user = User.objects.get(email="merchant@example.com")
    secret = setup(registered)
    assert csrf_post(registered, "/api/v1/auth/totp/enable", {"code": code_at(secret, time.time())}).status_code == 200
    assert only(user, "second_factor.totp_enabled").actor_person_id == user.pk
    off = csrf_post(registered, "/api/v1/auth/totp/disable", {"code": code_at(secret, time.time() + 30)})
    assert off.status_code in (200, 204), off.content
    assert only(user, "second_factor.totp_disabled").ip == "127.0.0.1"


def test_api_keys_made_and_revoked_by_a_member_name_the_member(owner):
    person = User.objects.create_user(f"dev-{uuid.uuid4().hex[:6]}@example.com", "a long enough passphrase")
    Membership.objects.create(organization=owner, person=person, role=Role.DEVELOPER)
    client = stepped_up(APIClient(), person)
    session = client.session
    session["accounts.organization"] = owner.pk
    session.save()
    made = client.post("/api/v1/api-keys", {"name": "ci", "scopes": ["drafts:read"]}, format="json")
    assert made.status_code == 200, made.content
    created = only(owner, "api_key.created")
    assert (created.actor_person_id, created.changes["name"], created.changes["scopes"]) == (
        person.pk,
        "ci",
        ["drafts:read"],
    )
    assert client.delete(f"/api/v1/api-keys/{made.json()['id']}").status_code == 200
    revoked = only(owner, "api_key.revoked")
    assert revoked.actor_person_id == person.pk and revoked.changes["key"] == made.json()["id"]


def test_members_and_roles_are_recorded(owner):
    person = User.objects.create_user(f"m-{uuid.uuid4().hex[:6]}@example.com", "a long enough passphrase")
    membership = member_add(organization=owner, person=person, role=Role.SUPPORT)
    member_role_set(membership=membership, role=Role.VIEWER)
    member_remove(membership=membership)
    assert only(owner, "member.added").changes == {"person": str(person.public_id), "role": "support"}
    assert only(owner, "member.role_changed").changes["role"] == ["support", "viewer"]
    assert only(owner, "member.removed").changes["keysRevoked"] == 0


@override_settings(PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES)
def test_receiving_addresses_are_recorded_with_the_key_that_changed_them(owner):
    client, key = keyed(owner)
    body = {"label": "Till", "address": ADDRESSES["Ethereum"], "network": "Ethereum", "direction": "Receiving"}
    added = client.post("/api/v1/address-book", body, format="json")
    assert added.status_code == 200, added.content
    entry = only(owner, "address_book.added")
    assert (entry.actor_key_id, entry.actor_person_id) == (key.id, None)
    assert entry.changes["address"] == ADDRESSES["Ethereum"]
    assert client.delete(f"/api/v1/address-book/{added.json()['id']}").status_code in (200, 204)
    assert only(owner, "address_book.removed").changes["address"] == ADDRESSES["Ethereum"]


def test_receiving_wallets_are_recorded(owner):
    client, key = keyed(owner)
    made = client.post(
        "/api/v1/receiving-wallets",
        {"network": "Testnet", "descriptor": f"wpkh([73c5da0a/84h/1h/0h]{TPUB}/0/*)"},
        format="json",
    )
    assert made.status_code == 200, made.content
    assert only(owner, "receiving_wallet.added").changes["wallet"] == made.json()["id"]
    assert client.delete(f"/api/v1/receiving-wallets/{made.json()['id']}").status_code == 200
    assert only(owner, "receiving_wallet.archived").actor_key_id == key.id


def test_the_address_lock_is_recorded(owner):
    person = stepped_up(APIClient(), owner)
    assert person.put("/api/v1/account/receiver-lock", {"enabled": True}, format="json").status_code == 200
    assert only(owner, "address_lock.on").actor_person_id == owner.pk
    assert person.put("/api/v1/account/receiver-lock", {"enabled": False}, format="json").status_code == 200
    assert only(owner, "address_lock.turning_off").changes["offAt"] is not None


def test_webhook_endpoints_are_recorded(owner, fake_dns):
    fake_dns.answers["hooks.example.com"] = ["93.184.216.34"]
    client, key = keyed(owner)
    made = client.post("/api/v1/webhooks", {"url": "https://hooks.example.com/in"}, format="json")
    assert made.status_code in (200, 201), made.content
    webhook_id = made.json()["id"]
    assert only(owner, "webhook.created").changes["url"] == "https://hooks.example.com/in"
    assert client.patch(f"/api/v1/webhooks/{webhook_id}", {"active": False}, format="json").status_code == 200
    assert only(owner, "webhook.changed").changes["active"] is False
    assert client.delete(f"/api/v1/webhooks/{webhook_id}").status_code in (200, 204)
    assert only(owner, "webhook.deleted").actor_key_id == key.id


def test_accepting_a_received_amount_is_recorded(owner):
    client, key = keyed(owner)
    draft = make_draft(owner)
    draft_payment_observed(draft_id=draft.id, tx_id="0x1", received_base_units=24_000_000, confirmations=0)
    accepted = client.post(f"/api/v1/drafts/{draft.id}/accept-received")
    assert accepted.status_code == 200, accepted.content
    entry = only(owner, "draft.amount_accepted")
    assert entry.actor_key_id == key.id and entry.changes["draft"] == str(draft.id)


def test_settings_changes_are_recorded(owner):
    person = stepped_up(APIClient(), owner)
    changed = person.patch("/api/v1/account/profile", {"displayName": "Shop"}, format="json")
    assert changed.status_code == 200, changed.content
    assert only(owner, "settings.profile_changed").changes == {"display_name": "Shop"}


def test_an_entry_is_never_updated_nor_deleted(owner):
    entry = record(organization=owner, action="test.kept", changes={"a": 1})
    entry.action = "test.changed"
    with pytest.raises(AppendOnly):
        entry.save()
    with pytest.raises(AppendOnly):
        entry.delete()
    with pytest.raises(AppendOnly):
        AuditEntry.objects.filter(pk=entry.pk).update(action="test.changed")
    with pytest.raises(AppendOnly):
        AuditEntry.objects.filter(pk=entry.pk).delete()
    with pytest.raises(AppendOnly):
        AuditEntry.objects.bulk_update([entry], ["action"])
    assert AuditEntry.objects.get(pk=entry.pk).action == "test.kept"


def test_the_admin_shows_entries_read_only():
    from django.contrib import admin

    entry_admin = admin.site._registry[AuditEntry]
    assert not entry_admin.has_add_permission(None)
    assert not entry_admin.has_change_permission(None)
    assert not entry_admin.has_delete_permission(None)


def test_entries_past_retention_are_purged_in_batches(owner, settings):
    settings.AUDIT_RETENTION_DAYS = 30
    now = timezone.now()
    for days in (31, 40, 50, 29, 1):
        AuditEntry.objects.create(organization=owner, action="test.aged", created_at=now - timedelta(days=days))
    assert audit_purge(batch=2, now=now) == 3
    assert sorted((now - e.created_at).days for e in AuditEntry.objects.filter(action="test.aged")) == [1, 29]


def test_owners_and_admins_read_the_log_filtered_and_paged(owner, other_account):
    for n in range(3):
        record(organization=owner, action="member.added", changes={"n": n})
    record(organization=owner, action="api_key.created")
    record(organization=other_account, action="member.added")
    admin = _member(owner, Role.ADMIN)
    page = admin.get("/api/v1/audit-log", {"action": "member.", "pageSize": 2}).json()
    assert (page["total"], len(page["items"]), page["pageSize"]) == (3, 2, 2)
    assert [item["changes"]["n"] for item in page["items"]] == [2, 1]  # newest first
    assert page["items"][0]["actor"] == {"type": "system"}
    assert admin.get("/api/v1/audit-log", {"action": "api_key.created"}).json()["total"] == 1
    future = (timezone.now() + timedelta(days=1)).isoformat()
    assert admin.get("/api/v1/audit-log", {"since": future}).json()["total"] == 0
    bad = admin.get("/api/v1/audit-log", {"since": "yesterday"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "since"
    for role in (Role.VIEWER, Role.SUPPORT, Role.DEVELOPER):
        refused = _member(owner, role).get("/api/v1/audit-log")
        assert refused.status_code == 403 and refused.json()["code"] == "role_required"
    client, _ = keyed(owner)
    assert client.get("/api/v1/audit-log").json()["code"] == "session_required"


def test_adding_and_removing_a_passkey_is_recorded(registered):
    user = User.objects.get(email="merchant@example.com")
    options = csrf_post(registered, "/api/v1/auth/register/begin").json()["publicKey"]
    first = Authenticator()
    body = {"credential": first.create_json(options, ORIGIN), "name": "Phone"}
    added = csrf_post(registered, "/api/v1/auth/register/complete", body)
    assert added.status_code == 200, added.content
    entry = only(user, "second_factor.passkey_added")
    assert (entry.actor_person_id, entry.changes["name"], entry.ip) == (user.pk, "Phone", "127.0.0.1")
    [passkey] = registered.get("/api/v1/auth/passkeys").json()
    step_up = csrf_post(registered, "/api/v1/auth/step-up/begin").json()["publicKey"]
    csrf_post(registered, "/api/v1/auth/step-up", {"credential": first.get_json(step_up, ORIGIN)})
    removed = csrf_call(registered, "delete", f"/api/v1/auth/passkeys/{passkey['id']}")
    assert removed.status_code == 200, removed.content
    assert only(user, "second_factor.passkey_removed").changes["passkey"] == passkey["id"]


def _member(organization: User, role: str) -> APIClient:
    return member(organization, role)[0]

"""Team roles through the authorization table: every route of the live URLconf a session may
call, with a member of each role working in an organization, answers as the table of roles says;
a viewer reads and changes nothing; a removed member's session and keys stop at the next request."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from django.urls import resolve
from rest_framework.test import APIClient

from accounts.authorization import Kind, rule_for, work_needed
from accounts.models import ApiKey, Membership, Role, User
from accounts.roles import GRANTS, Work, may
from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create
from accounts.stepup import STEP_UP_AT
from accounts.teams import ORGANIZATION_SESSION_KEY, LastOwner, OwnAccountOwner, member_remove, member_role_set
from tests.factories import make_draft
from tests.platform.test_authorization_table import _cases
from tests.shared_rows import SharedRows, session_client

ROLES = list(Role)
SESSION_KINDS = (Kind.KEY, Kind.SESSION, Kind.STEP_UP)


def _user(label: str) -> User:
    return User.objects.create_user(f"{label}-{uuid.uuid4().hex[:8]}@example.com", "a long enough passphrase")


def _member_client(organization: User, role: str, *, person: User | None = None) -> tuple[APIClient, User]:
    person = person or _user(role)
    Membership.objects.create(organization=organization, person=person, role=role)
    client = APIClient()
    client.force_login(person)
    session = client.session
    session[ORGANIZATION_SESSION_KEY] = organization.pk
    session[STEP_UP_AT] = time.time()
    session.save()
    return client, person


def _code(response) -> str | None:
    if response.status_code == 403 and response.get("Content-Type", "").startswith("application/problem+json"):
        return response.json().get("code")
    return None


def _role_cases():
    cases = []
    for param in _cases():
        name, path, method = param.values
        if name.startswith("admin:"):
            continue
        if rule_for(name, method).kind in SESSION_KINDS:
            cases.append(param)
    return cases


def test_the_table_of_roles():
    assert GRANTS[Role.OWNER] == set(Work)
    assert GRANTS[Role.VIEWER] == {Work.READ}
    assert GRANTS[Role.SUPPORT] == {Work.READ, Work.MONEY}
    assert GRANTS[Role.DEVELOPER] == {Work.READ, Work.DEVELOPER}
    assert Work.OWNER not in GRANTS[Role.ADMIN]


@pytest.fixture(scope="module")
def members(django_db_setup, django_db_blocker) -> Iterator[dict[str, str]]:
    """An organization with a member of each role, each signed in and working in it (the
    organization chosen in the session), made once for the module's cases
    (tests/shared_rows.py): role -> session key."""
    rows = SharedRows(django_db_blocker)
    with rows.writing():
        organization = rows.user("org")
        sessions = {}
        for role in ROLES:
            person = rows.user(role)
            Membership.objects.create(organization=organization, person=person, role=role)
            sessions[role] = rows.session(person, **{ORGANIZATION_SESSION_KEY: organization.pk})
    yield sessions
    rows.remove()


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "path", "method"), _role_cases())
def test_each_session_route_answers_each_role_as_the_table_says(name, path, method, members):
    rule = rule_for(name, method)
    work = work_needed(rule, method)
    observed, expected = {}, {}
    for role in ROLES:
        call = getattr(session_client(members[role], stepped_up=True), method.lower())
        response = call(path, {}, format="json") if method in ("POST", "PUT", "PATCH") else call(path)
        observed[role] = _code(response) == "role_required"
        expected[role] = work is not None and not may(role, work)
    assert observed == expected, (work, observed)


def test_a_viewer_changes_nothing_anywhere():
    """Every route that may change something (any method but GET and HEAD) of an organization
    needs more than reading."""
    for param in _role_cases():
        name, _, method = param.values
        work = work_needed(rule_for(name, method), method)
        if work is not None and method not in ("GET", "HEAD"):
            # A quote changes nothing; leaving changes only the viewer's own membership.
            assert not may(Role.VIEWER, work) or name in ("fees-quote", "team-leave"), name


@pytest.mark.django_db
def test_a_viewer_reads_the_organizations_drafts_and_cannot_create_one():
    organization = _user("org")
    draft = make_draft(organization)
    client, person = _member_client(organization, Role.VIEWER)
    listed = client.get("/api/v1/drafts")
    assert listed.status_code == 200
    assert [d["id"] for d in listed.json()["items"]] == [str(draft.id)]
    assert client.get(f"/api/v1/drafts/{draft.id}").status_code == 200
    refused = client.post("/api/v1/drafts", {"amount": "1", "currency": "USD"}, format="json")
    assert refused.status_code == 403 and refused.json()["code"] == "role_required"
    assert client.post(f"/api/v1/drafts/{draft.id}/cancel").json()["code"] == "role_required"
    assert client.get("/dashboard/drafts/", HTTP_ACCEPT="text/html").status_code == 200
    assert organization.drafts.count() == 1 and not person.drafts.exists()


@pytest.mark.django_db
def test_a_member_works_in_the_organization_and_keeps_their_own_second_factor():
    organization = _user("org")
    client, person = _member_client(organization, Role.DEVELOPER)
    created = client.post("/api/v1/api-keys", {"name": "ci", "scopes": ["drafts:read"]}, format="json")
    assert created.status_code == 200, created.content
    key = ApiKey.objects.get(pk=created.json()["id"])
    assert (key.user, key.created_by) == (organization, person)  # the organization's, made by the person
    me = client.get("/api/v1/auth/me").json()
    assert (me["email"], me["organizationId"], me["role"]) == (person.email, str(organization.public_id), "developer")
    # A person's own route acts on the person: the authenticator app set up is theirs.
    setup = client.post("/api/v1/auth/totp/setup", {}, format="json")
    assert setup.status_code == 200, setup.content
    assert person.totpdevice_set.exists() and not organization.totpdevice_set.exists()


@pytest.mark.django_db
def test_a_removed_members_session_and_keys_stop_at_the_next_request():
    organization = _user("org")
    client, person = _member_client(organization, Role.ADMIN)
    assert client.get("/api/v1/drafts").status_code == 200
    issued = api_key_create(user=organization, name="theirs", scopes=ALL_SCOPES, created_by=person)
    other = api_key_create(user=organization, name="the owner's", scopes=ALL_SCOPES)
    keyed = APIClient()
    keyed.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")
    assert keyed.get("/api/v1/drafts").status_code == 200

    assert member_remove(membership=Membership.objects.get(organization=organization, person=person)) == 1

    refused = client.get("/api/v1/drafts")
    assert refused.status_code == 403 and refused.json()["code"] == "not_a_member"
    assert client.get("/api/v1/drafts").status_code in (401, 403)  # the session is gone
    assert client.get("/dashboard/", HTTP_ACCEPT="text/html").status_code == 302  # to sign-in
    assert keyed.get("/api/v1/drafts").status_code == 401
    still = APIClient()
    still.credentials(HTTP_AUTHORIZATION=f"Bearer {other.key}")
    assert still.get("/api/v1/drafts").status_code == 200  # the organization's other keys keep working


@pytest.mark.django_db
def test_the_last_owner_stays_and_a_person_always_owns_their_own_account():
    organization = _user("org")
    _, second = _member_client(organization, Role.OWNER)
    own = Membership.objects.get(organization=organization, person=organization)
    with pytest.raises(OwnAccountOwner):
        member_remove(membership=own)
    with pytest.raises(OwnAccountOwner):
        member_role_set(membership=own, role=Role.VIEWER)
    theirs = Membership.objects.get(organization=organization, person=second)
    member_role_set(membership=theirs, role=Role.VIEWER)  # the account's own person is still an owner
    assert Membership.objects.get(pk=theirs.pk).role == Role.VIEWER
    assert LastOwner.default_code == "last_owner"


@pytest.mark.django_db
def test_the_switcher_moves_only_into_the_persons_organizations(client):
    organization, stranger = _user("org"), _user("stranger")
    person = _user("person")
    Membership.objects.create(organization=organization, person=person, role=Role.SUPPORT)
    client.force_login(person)
    client.post("/dashboard/organization", {"organization": str(stranger.public_id)})
    assert ORGANIZATION_SESSION_KEY not in client.session
    client.post("/dashboard/organization", {"organization": str(organization.public_id)})
    assert client.session[ORGANIZATION_SESSION_KEY] == organization.pk
    make_draft(organization)
    assert len(client.get("/api/v1/drafts").json()["items"]) == 1
    client.post("/dashboard/organization", {"organization": str(person.public_id)})
    assert client.get("/api/v1/drafts").json()["items"] == []


def test_every_route_that_names_a_role_names_known_work():
    for name, _, method in (p.values for p in _role_cases()):
        rule = rule_for(name, method)
        assert rule.role is None or rule.role in set(Work), name
    assert resolve("/dashboard/organization").view_name == "dashboard:organization"


def test_every_key_scope_stands_for_a_kind_of_work_a_role_grants():
    """A route guarded by a scope is open to sessions by the work the scope stands for: a new
    scope without one would make every such route a 500 for members."""
    from accounts.roles import SCOPE_WORK
    from accounts.scopes import ALL_SCOPES

    assert set(ALL_SCOPES) <= set(SCOPE_WORK), sorted(set(ALL_SCOPES) - set(SCOPE_WORK))

"""Working in an organization costs no query per request beyond a person's own account: a draft
created and read with an API key of an organization of several members (every role) runs as
many queries as with the key of an account of one, and a member's dashboard reads of the drafts
list cost the same each time (the membership is read once per request, with the organization
and its profile; accounts.teams.organization_resolve)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from accounts.models import Membership, Role
from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create
from tests.accounts.teams import member, person
from tests.drafts.conftest import ADDRESSES

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("_generous_limits"),
]


@pytest.fixture
def _generous_limits():
    with override_settings(API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"}):
        yield


def _keyed(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(user=user, name='k', scopes=list(ALL_SCOPES)).key}")
    return client


def _create_and_read(client: APIClient, amount: int) -> tuple[int, int]:
    """The queries of one draft creation and one read of it."""
    body = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": amount}
    with CaptureQueriesContext(connection) as creation:
        created = client.post("/api/v1/drafts", body, format="json")
    assert created.status_code == 201, created.json()
    with CaptureQueriesContext(connection) as read:
        answer = client.get(f"/api/v1/drafts/{created.json()['id']}")
    assert answer.status_code == 200 and answer.json()["amountSats"] == amount
    return len(creation), len(read)


def _organization_of_several():
    organization = person("org")
    for role in (Role.ADMIN, Role.DEVELOPER, Role.SUPPORT, Role.VIEWER):
        Membership.objects.create(organization=organization, person=person(role), role=role)
    return organization


def test_an_organizations_key_creates_and_reads_a_draft_with_the_queries_of_a_single_accounts_key():
    alone, organization = person("alone"), _organization_of_several()
    alone_client, organization_client = _keyed(alone), _keyed(organization)
    _create_and_read(alone_client, 1_000_001)  # the first request of the process builds its statements
    _create_and_read(organization_client, 1_000_002)

    by_alone = _create_and_read(alone_client, 1_000_003)
    by_organization = _create_and_read(organization_client, 1_000_004)

    assert by_organization == by_alone
    assert Membership.objects.filter(organization=organization).count() == 5  # its owner and four roles


def _drafts_list_queries(client: Client) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get("/dashboard/drafts/")
    assert response.status_code == 200
    return len(captured)


def test_a_members_dashboard_reads_the_drafts_list_with_the_same_queries_each_time():
    organization = _organization_of_several()
    _create_and_read(_keyed(organization), 1_000_005)
    client, _someone = member(organization, Role.SUPPORT, client_class=Client)
    owner_client = Client()
    owner_client.force_login(organization)
    _drafts_list_queries(client)  # the first request builds what a process builds once
    _drafts_list_queries(owner_client)

    first, second = _drafts_list_queries(client), _drafts_list_queries(client)
    own = _drafts_list_queries(owner_client)

    assert first == second
    # The membership (with the organization and its profile) is the one query a member pays.
    assert first == own + 1

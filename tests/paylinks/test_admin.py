"""Operators find pay links by order id and see the drafts payers chose; nothing edits them."""

import pytest
from django.urls import reverse

from accounts.models import User
from tests.conftest import operator_sign_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator_client(client):
    operator_sign_in(client, User.objects.create_superuser("operator@example.com", "operator passphrase"))
    return client


def test_the_admin_finds_a_request_by_order_id_and_shows_its_options_and_drafts(operator_client, create_link, select):
    wanted = create_link(orderId="INV-2026-0042")
    create_link(orderId="INV-2026-0099")
    draft_id = select(wanted["token"]).json()["draftId"]

    listing = operator_client.get(reverse("admin:paylinks_paymentrequest_changelist"), {"q": "INV-2026-0042"})
    page = operator_client.get(reverse("admin:paylinks_paymentrequest_change", args=[wanted["id"]]))

    assert wanted["id"] in listing.content.decode() and "INV-2026-0099" not in listing.content.decode()
    assert page.status_code == 200
    body = page.content.decode()
    assert draft_id in body and "USDC on Ethereum (SingleOutput)" in body
    assert 'name="status"' not in body  # read-only: status changes through the services only


def test_requests_cannot_be_added_or_deleted_in_the_admin(operator_client, create_link):
    link = create_link()

    assert operator_client.get(reverse("admin:paylinks_paymentrequest_add")).status_code == 403
    assert operator_client.get(reverse("admin:paylinks_paymentrequest_delete", args=[link["id"]])).status_code == 403

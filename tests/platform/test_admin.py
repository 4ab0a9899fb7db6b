import pytest
from django.contrib import admin
from django.urls import reverse

from accounts.models import User
from tests.conftest import operator_sign_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator_client(client):
    operator = User.objects.create_superuser("operator@example.com", "operator passphrase")
    operator_sign_in(client, operator)
    return client


def test_every_registered_model_has_a_working_list_and_search(operator_client, make_key, owner):
    from tests.factories import make_draft

    make_key("drafts:read")
    make_draft(owner)
    for model, model_admin in admin.site._registry.items():
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        assert operator_client.get(url).status_code == 200, url
        if model_admin.search_fields:
            assert operator_client.get(url, {"q": "example"}).status_code == 200, url


def test_api_keys_show_only_their_prefix_never_the_key(operator_client, make_key):
    key = make_key("drafts:read")
    page = operator_client.get(reverse("admin:accounts_apikey_changelist")).content.decode()
    assert key[:12] in page
    assert key not in page


def test_the_admin_requires_a_staff_login(client):
    response = client.get("/admin/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_a_draft_can_be_opened_but_its_money_and_status_cannot_be_edited(operator_client, owner):
    from tests.factories import make_draft

    draft = make_draft(owner)
    url = reverse("admin:drafts_draft_change", args=[draft.pk])
    page = operator_client.get(url)
    assert page.status_code == 200
    operator_client.post(url, {"memo": "note", "status": "Confirmed", "amount_base_units": 1})
    draft.refresh_from_db()
    assert draft.status == "Pending" and draft.amount_base_units == 25_000_000

"""POST /api/v1/suggestions: anyone may send one, limited per IP; the operator sees them in the admin."""

import pytest
from django.test import override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import User
from suggestions.models import Suggestion
from tests.conftest import operator_sign_in

pytestmark = pytest.mark.django_db

URL = "/api/v1/suggestions"


def test_an_anonymous_visitor_can_send_a_suggestion_with_an_email(anon_client):
    response = anon_client.post(URL, {"text": "Please add Litecoin.", "email": "fan@example.com"}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert body["received"] is True and body["createdAt"].endswith("Z")
    stored = Suggestion.objects.get(pk=body["id"])
    assert (stored.text, stored.email, stored.user, stored.handled) == (
        "Please add Litecoin.",
        "fan@example.com",
        None,
        False,
    )


def test_a_signed_in_sender_is_remembered(api_client, owner):
    response = api_client.post(URL, {"text": "Dark mode for the pay page."}, format="json")

    assert response.status_code == 200
    assert Suggestion.objects.get(pk=response.json()["id"]).user == owner


def test_a_key_without_any_particular_scope_may_send_one(client_with_scopes):
    assert client_with_scopes("rates:read").post(URL, {"text": "hi"}, format="json").status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": "x" * 4001}, "text"),
        ({"text": ""}, "text"),
        ({}, "text"),
        ({"text": "ok", "email": "not-an-email"}, "email"),
        ({"text": "ok", "rating": 5}, "rating"),
    ],
)
def test_bad_input_is_a_problem_naming_the_field_and_stores_nothing(anon_client, body, field):
    response = anon_client.post(URL, body, format="json")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert field in [e["field"] for e in response.json()["errors"]]
    assert not Suggestion.objects.exists()


def test_text_of_exactly_4000_characters_is_accepted(anon_client):
    assert anon_client.post(URL, {"text": "y" * 4000}, format="json").status_code == 200


@override_settings(SUGGESTIONS_RATE_LIMIT="3/hour")
def test_suggestions_are_limited_per_ip_whoever_sends_them(api_client):
    visitor = APIClient(REMOTE_ADDR="198.51.100.7")
    neighbour = APIClient(REMOTE_ADDR="198.51.100.8")

    answers = [visitor.post(URL, {"text": f"idea {i}"}, format="json").status_code for i in range(4)]

    assert answers == [200, 200, 200, 429]
    assert visitor.post(URL, {"text": "more"}, format="json")["Retry-After"]
    # A forged X-Forwarded-For does not open a fresh budget (no trusted proxy configured).
    forged = visitor.post(URL, {"text": "again"}, format="json", HTTP_X_FORWARDED_FOR="203.0.113.50")
    assert forged.status_code == 429
    assert neighbour.post(URL, {"text": "mine"}, format="json").status_code == 200
    assert Suggestion.objects.count() == 4


def test_the_operator_lists_suggestions_and_marks_them_handled_in_the_admin(client):
    operator = User.objects.create_superuser("operator@example.com", "operator passphrase")
    operator_sign_in(client, operator)
    first = Suggestion.objects.create(text="Add a CSV export")
    Suggestion.objects.create(text="Support Polygon", email="p@example.com")
    url = reverse("admin:suggestions_suggestion_changelist")

    page = client.get(url)
    assert page.status_code == 200
    assert "Add a CSV export" in page.content.decode() and "Support Polygon" in page.content.decode()

    client.post(url, {"action": "mark_handled", "_selected_action": [str(first.pk)]})
    first.refresh_from_db()
    assert first.handled is True
    assert "Support Polygon" in client.get(url, {"handled__exact": "0"}).content.decode()
    assert "Add a CSV export" not in client.get(url, {"handled__exact": "0"}).content.decode()

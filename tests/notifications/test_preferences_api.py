"""The account's email preference over the API."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_the_notification_preference_is_on_by_default_and_can_be_turned_off(api_client, owner):
    assert api_client.get("/api/v1/notification-preferences").json() == {"emailEnabled": True, "attentionDigest": True}

    response = api_client.patch("/api/v1/notification-preferences", {"emailEnabled": False}, format="json")

    off = {"emailEnabled": False, "attentionDigest": True}
    assert response.json() == off
    assert api_client.get("/api/v1/notification-preferences").json() == off


def test_the_preference_needs_the_webhooks_scope(client_with_scopes):
    response = client_with_scopes("drafts:read").get("/api/v1/notification-preferences")

    assert response.status_code == 403
    assert response.json()["code"] == "missing_scope"

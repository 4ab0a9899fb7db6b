"""Every list refuses a query parameter it does not know (400 naming it) instead of ignoring
it, and a filter a list documents filters (`deliveries?status=Failed`)."""

from __future__ import annotations

import pytest
from django.urls import resolve

from accounts.authorization import Kind, rule_for
from tests.openapi import document
from webhooks.models import Delivery, DeliveryStatus

pytestmark = pytest.mark.django_db


def list_paths() -> list[str]:
    """Every GET of the API that pages (it takes `page`), with a stand-in for each path id."""
    return sorted(
        path
        for path, operations in document()["paths"].items()
        if any(p["name"] == "page" for p in operations.get("get", {}).get("parameters", []))
    )


def test_the_lists_are_found():
    assert {"/api/v1/drafts", "/api/v1/webhooks", "/api/v1/webhooks/{id}/deliveries", "/api/v1/api-keys"} <= set(
        list_paths()
    )


def needs_session(path: str) -> bool:
    """What the authorization table says a GET of this path takes: a session, or a key."""
    rule = rule_for(resolve(path).view_name, "GET")
    return rule.kind in (Kind.SESSION, Kind.STEP_UP)


@pytest.mark.parametrize("path", list_paths())
def test_an_unknown_query_parameter_is_a_400_naming_it(path, api_client, session_client, owner, fake_dns):
    fake_dns.answers["hooks.example.com"] = ["93.184.216.34"]
    if "{id}" in path:  # a list under an object of the account: make one
        hook = api_client.post("/api/v1/webhooks", {"url": "https://hooks.example.com/x"}, format="json").json()
        path = path.replace("{id}", hook["id"])
    client = session_client if needs_session(path) else api_client  # e.g. keys, the audit log
    response = client.get(path, {"colour": "red", "pageSize": 5})
    assert response.status_code == 400, (path, response.content)
    assert [error["field"] for error in response.json()["errors"]] == ["colour"], path
    assert client.get(path, {"pageSize": 5}).status_code == 200, path


def test_deliveries_filter_by_status(api_client, fake_dns):
    fake_dns.answers["hooks.example.com"] = ["93.184.216.34"]
    hook = api_client.post("/api/v1/webhooks", {"url": "https://hooks.example.com/x"}, format="json").json()
    first = api_client.post(f"/api/v1/webhooks/{hook['id']}/test").json()
    second = api_client.post(f"/api/v1/webhooks/{hook['id']}/test").json()
    Delivery.objects.filter(pk=first["id"]).update(status=DeliveryStatus.FAILED)
    path = f"/api/v1/webhooks/{hook['id']}/deliveries"
    failed = api_client.get(path, {"status": "Failed"}).json()
    assert [item["id"] for item in failed["items"]] == [first["id"]] and failed["total"] == 1
    pending = api_client.get(path, {"status": "Pending"}).json()
    assert [item["id"] for item in pending["items"]] == [second["id"]]
    assert api_client.get(path).json()["total"] == 2
    refused = api_client.get(path, {"status": "failed"})
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "status"

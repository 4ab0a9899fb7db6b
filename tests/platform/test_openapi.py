import re

import pytest
import yaml
from django.core.management import call_command
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db


def api_routes() -> set[str]:
    """Every /api/v1 route of the live URLconf, in OpenAPI path form."""
    found: set[str] = set()

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            segment = str(pattern.pattern).lstrip("^").rstrip("$")
            segment = re.sub(r"\(\?P<(\w+)>[^)]+\)", r"{\1}", segment)  # regex groups (routers)
            segment = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", segment)  # path converters
            text = prefix + segment
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, text)
            elif isinstance(pattern, URLPattern):
                path = "/" + text
                if path.startswith("/api/v1/") and path != "/api/v1/schema":
                    found.add(path.replace("{pk}", "{id}"))

    walk(get_resolver().url_patterns, "")
    return found


def test_the_schema_validates_without_warnings(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))


def test_the_document_is_served_as_json_and_yaml(anon_client):
    as_json = anon_client.get("/api/v1/schema")
    assert as_json.status_code == 200 and as_json["Content-Type"].startswith("application/vnd.oai.openapi+json")
    document = as_json.json()
    assert document["info"]["version"] == "v1"
    as_yaml = anon_client.get("/api/v1/schema?format=yaml")
    assert as_yaml.status_code == 200
    assert yaml.safe_load(as_yaml.content)["paths"] == document["paths"]


def test_every_api_route_appears_in_the_document(anon_client):
    documented = set(anon_client.get("/api/v1/schema").json()["paths"])
    routes = api_routes()
    assert routes, "no /api/v1 routes found"
    assert routes <= documented, routes - documented


def test_request_bodies_reject_unknown_properties_and_accept_every_json_type(anon_client):
    document = anon_client.get("/api/v1/schema").json()
    assert document["components"]["schemas"]["CreateApiKeyRequest"]["additionalProperties"] is False
    content = document["paths"]["/api/v1/api-keys"]["post"]["requestBody"]["content"]
    assert {"application/json", "text/json", "application/*+json"} <= set(content)


def test_operations_show_the_bearer_scheme_and_their_requirements(anon_client):
    document = anon_client.get("/api/v1/schema").json()
    assert document["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert "session" in document["paths"]["/api/v1/api-keys"]["post"]["description"]


def test_swagger_ui_is_served_with_local_assets(anon_client):
    response = anon_client.get("/swagger")
    assert response.status_code == 200
    assert b"swagger-ui" in response.content
    assert b"cdn.jsdelivr" not in response.content

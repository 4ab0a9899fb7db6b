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


CREATING_OPERATIONS = {
    ("post", "/api/v1/drafts"),
    ("post", "/api/v1/fees/accrued/settle"),
    ("post", "/api/v1/demo/drafts"),
    ("post", "/api/v1/payment-requests"),
}


def operations(document):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield method, path, operation


def test_only_the_creations_the_spec_names_answer_201_and_no_success_is_202_or_204(anon_client):
    document = anon_client.get("/api/v1/schema").json()

    for method, path, operation in operations(document):
        successes = {code for code in operation["responses"] if code.startswith("2")}
        expected = {"201"} if (method, path) in CREATING_OPERATIONS else {"200"}
        assert successes == expected, (method, path, successes)
        for code in successes:
            assert operation["responses"][code].get("content"), (method, path, "success without a body")


def test_every_201_documents_its_location_header(anon_client):
    document = anon_client.get("/api/v1/schema").json()

    created = [op["responses"]["201"] for _, _, op in operations(document) if "201" in op["responses"]]
    assert len(created) >= 2
    assert all(response["headers"]["Location"]["required"] is True for response in created)

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


def test_request_bodies_reject_unknown_properties_and_are_declared_as_json(anon_client):
    document = anon_client.get("/api/v1/schema").json()
    assert document["components"]["schemas"]["CreateApiKeyRequest"]["additionalProperties"] is False
    content = document["paths"]["/api/v1/api-keys"]["post"]["requestBody"]["content"]
    assert set(content) == {"application/json"}  # text/json and application/*+json are parsed too, undeclared


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
    ("post", "/api/v1/refunds"),
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


def test_every_operation_documents_its_problem_responses(anon_client):
    document = anon_client.get("/api/v1/schema").json()
    problem = document["components"]["schemas"]["Problem"]
    assert set(problem["required"]) == {"type", "title", "status", "detail", "code", "errors"}
    assert problem["properties"]["status"]["type"] == "integer"
    assert set(document["components"]["schemas"]["ProblemFieldError"]["properties"]) == {"field", "code", "message"}

    for method, path, operation in operations(document):
        errors = {code for code in operation["responses"] if code >= "400"}
        anonymous = {} in operation.get("security", [])
        expected = {"400", "429"} | (set() if anonymous else {"401", "403"}) | ({"404"} if "{" in path else set())
        if method in ("post", "put", "patch"):
            expected |= {"413"} | ({"415"} if "requestBody" in operation else set())
        assert expected <= errors, (method, path, expected - errors)
        for code in errors:
            content = operation["responses"][code]["content"]
            assert content == {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}


def test_domain_errors_are_documented_where_they_occur(anon_client):
    paths = anon_client.get("/api/v1/schema").json()["paths"]

    assert {"402", "409", "422", "503"} <= set(paths["/api/v1/drafts"]["post"]["responses"])
    assert {"409", "503"} <= set(paths["/api/v1/fees/accrued/settle"]["post"]["responses"])
    assert "409" in paths["/api/v1/drafts/{id}/cancel"]["post"]["responses"]
    assert "409" in paths["/api/v1/webhooks/{id}/test"]["post"]["responses"]
    assert "503" in paths["/api/v1/rates"]["get"]["responses"]
    assert "402" not in paths["/api/v1/drafts/{id}"]["get"]["responses"]


def test_costly_operations_name_their_rate_limit_class_and_document_its_429(anon_client):
    document = anon_client.get("/api/v1/schema").json()

    classes = {(m, p): op.get("x-rate-limit-class") for m, p, op in operations(document)}
    costly = {key: cost for key, cost in classes.items() if cost}
    assert costly == {
        ("get", "/api/v1/drafts/{id}/pdf"): "pdf",
        ("get", "/api/v1/drafts/{id}/tx-template"): "tx-template",
        ("post", "/api/v1/drafts/batch"): "batch",
        ("post", "/api/v1/test-helpers/drafts/{id}/pay"): "test-helper",
        ("post", "/api/v1/test-helpers/drafts/{id}/expire"): "test-helper",
        ("post", "/api/v1/test-helpers/drafts/{id}/reorg"): "test-helper",
    }
    paths = document["paths"]
    assert "`pdf` class" in paths["/api/v1/drafts/{id}/pdf"]["get"]["responses"]["429"]["description"]
    assert "`batch` class" in paths["/api/v1/drafts/batch"]["post"]["description"]
    assert "409" in paths["/api/v1/api-keys"]["post"]["responses"]  # api_key_limit_reached


@pytest.mark.parametrize("path", ["/api/v1/drafts", "/api/v1/webhooks", "/api/v1/api-keys"])
def test_lists_are_described_as_the_paged_envelope_they_return(anon_client, path):
    document = anon_client.get("/api/v1/schema").json()
    schema = document["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]

    component = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    assert component["type"] == "object"
    assert set(component["properties"]) == set(component["required"]) == {"items", "page", "pageSize", "total", "next"}
    assert component["properties"]["items"]["type"] == "array"


def test_batch_items_are_a_batch_draft_item_component_holding_a_create_draft_request(anon_client):
    schemas = anon_client.get("/api/v1/schema").json()["components"]["schemas"]

    items = schemas["BatchCreateDraftsRequest"]["properties"]["items"]
    assert items["type"] == "array" and items["nullable"] is True
    assert items["items"] == {"$ref": "#/components/schemas/BatchDraftItem"}
    item = schemas["BatchDraftItem"]
    assert item["properties"]["draft"] == {"$ref": "#/components/schemas/CreateDraftRequest"}
    assert item["properties"]["idempotencyKey"]["nullable"] is True
    assert item["additionalProperties"] is False


def test_nullability_follows_the_spec_field_tables(anon_client):
    schemas = anon_client.get("/api/v1/schema").json()["components"]["schemas"]
    draft = schemas["DraftResponse"]

    # sek: SekValueInfo (always there); amountMismatch: AmountMismatchInfo, not nullable (absent until one)
    assert draft["properties"]["sek"] == {"$ref": "#/components/schemas/SekValueInfo"} and "sek" in draft["required"]
    assert draft["properties"]["amountMismatch"].get("nullable") is not True
    assert "amountMismatch" not in draft["required"]
    for name in ("receiverAddress", "senderAddress", "amountBtc", "fiatCurrency", "fiatAmount", "bolt11", "memo"):
        assert draft["properties"][name]["nullable"] is True, name
    for name in ("platformFeeAddress", "paidTxId", "feeOutputs", "tokenAddress", "paymentUri", "lightningAddress"):
        assert draft["properties"][name]["nullable"] is True, name
    for name in ("id", "amountSats", "platformFeeSats", "requiredConfirmations", "feeAccrued", "isFeeSettlement"):
        assert not draft["properties"][name].get("nullable"), name
    result = schemas["BatchDraftResult"]
    assert result["properties"]["error"]["nullable"] is True and not result["properties"]["draft"].get("nullable")
    mismatch = schemas["AmountMismatchInfo"]["properties"]
    assert {name for name, field in mismatch.items() if field.get("nullable")} == {
        "txId",
        "receivedFormatted",
        "differenceFormatted",
        "acceptedAt",
    }


def test_the_served_document_is_the_same_after_the_mcp_tools_list_and_api_requests(anon_client, api_client):
    """One process serves the same document all its life: building MCP's tools/list (which
    generates the document too) and answering API requests in between change nothing."""
    from mcp_server import schemas
    from mcp_server.tools import tool_list

    before = anon_client.get("/api/v1/schema").json()
    assert tool_list() and schemas.openapi_document()["paths"]
    for path in ("/api/v1/drafts", "/api/v1/payment-requests", "/api/v1/refunds"):
        assert api_client.get(path).status_code == 200, path
        assert api_client.head(path).status_code == 200, path
    after = anon_client.get("/api/v1/schema").json()
    assert after == before
    drafts = after["paths"]["/api/v1/drafts"]
    assert drafts["get"]["x-required-scopes"] == ["drafts:read"]
    assert drafts["post"]["x-required-scopes"] == ["drafts:write"]
    assert "Required API key scope: `drafts:write`." in drafts["post"]["description"]


def test_every_viewset_route_finds_its_rule_before_and_after_its_first_request():
    """DRF adds `head` to a viewset route's actions on its first request (in place): the
    document's scopes and notes find the route's rule either way."""
    from accounts.authorization import rule_of_view

    def callbacks(patterns):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from callbacks(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and "get" in (getattr(pattern.callback, "actions", None) or {}):
                yield pattern.callback

    checked = 0
    for callback in callbacks(get_resolver().url_patterns):
        first = {method: action for method, action in callback.actions.items() if method != "head"}
        later = {**first, "head": first["get"]}  # as DRF leaves it after a request
        view = callback.cls(**callback.initkwargs)
        found = []
        for actions in (first, later):
            view.action_map = actions
            found.append(rule_of_view(view, "GET"))
        assert found[0] is not None and found[0] == found[1], (callback.cls.__name__, first)
        checked += 1
    assert checked > 10

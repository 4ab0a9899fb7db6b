"""Every error under /api/ is application/problem+json with the documented shape."""

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.platform.urls")]

PROBLEM_KEYS = {"type", "title", "status", "detail", "code", "errors"}


def assert_problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert PROBLEM_KEYS <= set(body)
    assert body["status"] == status
    assert body["code"] == code
    assert body["type"].endswith(f"/problems/{code}")
    return body


def test_validation_errors_name_each_field(api_client):
    response = api_client.post("/api/v1/test/scoped", {"amountSats": 0, "memo": "x" * 11}, format="json")
    body = assert_problem(response, 400, "validation_error")
    assert {(e["field"], e["code"]) for e in body["errors"]} == {("amountSats", "min_value"), ("memo", "max_length")}


def test_a_single_field_error_lends_its_code_to_the_problem(api_client):
    body = assert_problem(api_client.post("/api/v1/test/scoped", {}, format="json"), 400, "required")
    assert body["errors"] == [{"field": "amountSats", "code": "required", "message": "This field is required."}]
    assert "amountSats" in body["detail"]


def test_unknown_properties_are_rejected(api_client):
    body = assert_problem(
        api_client.post("/api/v1/test/scoped", {"amountSats": 5, "amount": 5}, format="json"), 400, "unknown_field"
    )
    assert body["errors"][0]["field"] == "amount"


def test_malformed_json_is_400(api_client):
    response = api_client.post("/api/v1/test/scoped", data='{"amountSats": ', content_type="application/json")
    assert_problem(response, 400, "malformed_json")


def test_a_json_array_instead_of_an_object_is_400(api_client):
    response = api_client.post("/api/v1/test/scoped", data="[1, 2]", content_type="application/json")
    assert_problem(response, 400, "invalid")


@pytest.mark.parametrize(
    "content_type", ["application/json", "text/json", "application/merge-patch+json", "application/json; charset=utf-8"]
)
def test_json_bodies_are_accepted_under_every_json_media_type(api_client, content_type):
    response = api_client.post("/api/v1/test/scoped", data='{"amountSats": 7}', content_type=content_type)
    assert response.status_code == 200
    assert response.json() == {"amountSats": 7}


def test_a_wrong_content_type_is_415(api_client):
    response = api_client.post(
        "/api/v1/test/scoped", data="amountSats=7", content_type="application/x-www-form-urlencoded"
    )
    assert_problem(response, 415, "unsupported_media_type")


def test_no_credentials_is_401(anon_client):
    assert_problem(anon_client.get("/api/v1/test/scoped"), 401, "not_authenticated")


def test_a_missing_scope_is_403(client_with_scopes):
    assert_problem(client_with_scopes("rates:read").get("/api/v1/test/scoped"), 403, "missing_scope")


@pytest.mark.parametrize("path", ["/api/v1/nothing-here", "/api/v1/api-keys/123", "/api/v2/drafts"])
def test_unknown_addresses_are_404_problems(api_client, path):
    assert_problem(api_client.get(path), 404, "not_found")


@override_settings(DEBUG=True)
def test_even_in_debug_mode_no_html_404_reaches_an_api_client(api_client):
    assert_problem(api_client.get("/api/v1/nothing-here"), 404, "not_found")


def test_a_wrong_method_is_405(api_client):
    response = api_client.put("/api/v1/test/scoped", {}, format="json")
    assert_problem(response, 405, "method_not_allowed")


def test_an_oversized_body_is_413(api_client):
    big = '{"memo": "' + "x" * (300 * 1024) + '"}'
    assert_problem(
        api_client.post("/api/v1/test/scoped", data=big, content_type="application/json"), 413, "payload_too_large"
    )


@override_settings(API_RATE_LIMITS={"read": "2/min", "write": "2/min"})
def test_too_many_requests_is_429_with_retry_after(api_client):
    for _ in range(2):
        assert api_client.get("/api/v1/test/scoped").status_code == 200
    response = api_client.get("/api/v1/test/scoped")
    assert_problem(response, 429, "rate_limited")
    assert 1 <= int(response["Retry-After"]) <= 60


def test_an_unexpected_error_is_a_500_problem_without_a_stack_trace(api_client):
    client = APIClient(raise_request_exception=False)
    client.credentials(**api_client._credentials)
    body = assert_problem(client.get("/api/v1/test/crash"), 500, "internal_error")
    assert "boom" not in str(body) and "Traceback" not in str(body)


def test_a_page_number_beyond_any_listing_is_400_not_a_database_error(session_client):
    response = session_client.get("/api/v1/api-keys", {"page": 10**30})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "page"

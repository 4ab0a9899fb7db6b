"""Every error the Django side answers is problem+json, outside /api/ too, unless the client
asks for HTML (a browser keeps its pages): unknown addresses, wrong methods, CSRF failures,
unreadable requests and crashes."""

import json

import pytest
from django.test import Client, override_settings
from django.urls import path

from config import urls as project_urls
from core.problems import Problem

pytestmark = pytest.mark.django_db
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def assert_problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == "application/problem+json", response.content[:300]
    problem = response.json()
    assert problem["status"] == status and problem["code"] == code and problem["type"].endswith(code)
    assert problem["detail"] and problem["errors"] == []
    return problem


@pytest.mark.parametrize("accept", [None, "*/*", "application/json"])
@pytest.mark.parametrize("address", ["/no-such-page", "/mcp", "/dashboard/no-such-page", "/pay/"])
def test_an_unknown_address_is_a_problem_404(address, accept):
    headers = {"HTTP_ACCEPT": accept} if accept else {}
    assert_problem(Client().get(address, **headers), 404, "not_found")


def test_a_browser_still_gets_a_page_for_an_unknown_address():
    response = Client().get("/no-such-page", HTTP_ACCEPT=BROWSER)
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("address", ["/healthz", "/llms.txt", "/account/sign-out"])
def test_a_method_a_page_does_not_take_is_a_problem_405_with_allow(address):
    response = Client().generic("PUT", address, b"{}")
    assert_problem(response, 405, "method_not_allowed")
    assert response["Allow"]


def test_a_page_write_without_its_csrf_token_is_a_problem_403():
    client = Client(enforce_csrf_checks=True)
    problem = assert_problem(client.post("/account/sign-in", {"email": "a@example.com"}), 403, "permission_denied")
    assert "CSRF" in problem["detail"]
    page = client.post("/account/sign-in", {"email": "a@example.com"}, HTTP_ACCEPT=BROWSER)
    assert page.status_code == 403 and page["Content-Type"].startswith("text/html")


def test_a_chunked_page_body_is_a_problem_411():
    # The body arrives with no Content-Length (Django would read it as empty).
    response = Client().generic("POST", "/account/sign-in", b"", HTTP_TRANSFER_ENCODING="chunked")
    assert_problem(response, 411, "length_required")


def test_an_unreadable_request_is_a_problem_400():
    # A Host that is not allowed: Django refuses it as a suspicious operation.
    assert_problem(Client().get("/account/sign-in", HTTP_HOST="evil.example"), 400, "bad_request")


def crash(request):
    raise RuntimeError("boom")


urlpatterns = [path("crash", crash, name="crash")]  # its rule: tests/platform/authorization.py
handler500 = project_urls.handler500


@override_settings(ROOT_URLCONF=__name__)
def test_a_crash_outside_the_api_is_a_problem_500_without_a_trace():
    response = Client(raise_request_exception=False).get("/crash")
    problem = assert_problem(response, 500, "internal_error")
    assert "boom" not in response.content.decode() and "Traceback" not in response.content.decode()
    assert problem["detail"] == "An unexpected error occurred. It has been logged."


def test_a_problem_quoting_a_long_input_renders_a_small_document():
    quoted = "\U0001f600" * 20_000
    errors = [{"field": quoted, "code": "invalid", "message": f"{quoted!r} is not valid."}] * 50
    problem = Problem(f"Unknown value {quoted!r}.", errors=errors, extra={"validValues": ["A", "B"]})
    document = problem.document()
    assert len(json.dumps(document)) < 8192
    assert document["detail"].startswith("Unknown value") and document["detail"].endswith("\u2026")
    assert document["errors"] and document["errorsOmitted"] == 50 - len(document["errors"])
    assert document["validValues"] == ["A", "B"]


def test_a_problem_with_a_long_detail_of_its_own_keeps_it():
    detail = "Unknown fiat currency. Valid values: " + ", ".join(f"C{i:02}" for i in range(300))
    assert Problem(detail).document()["detail"] == detail

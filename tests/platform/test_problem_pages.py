"""Every problem `type` URL is a page: each code the source can raise has its own text at
{BASE_URL}/problems/{code} (HTML for people), and docs/problems.md is the same text."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from about.problems import PROBLEM_TYPES, problems_markdown
from core.api.problems import _DRF_CODES
from core.outages import DETAILS

REPO = Path(__file__).resolve().parents[2]
OUTSIDE = {".venv", "node_modules", "tests", "var", "bench", "scripts", "migrations", "site"}
PROBLEM_CALLS = {"problem_response", "problem_document", "ErrorDetail"}


def raised_codes() -> set[str]:
    """The codes the source gives an error: `code=` arguments, `code`/`default_code`/`CODE`
    constants, the code argument of problem_response/problem_document/ErrorDetail, DRF's
    exceptions as core.api.problems names them, and the outages' `{kind}_unavailable`."""
    codes = set(_DRF_CODES.values()) | {f"{kind}_unavailable" for kind in DETAILS} | {"validation_error"}
    for path in REPO.rglob("*.py"):
        if OUTSIDE & set(path.relative_to(REPO).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "code" and isinstance(node.value, ast.Constant):
                codes.add(node.value.value)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Constant):
                target = node.targets[0]
                if isinstance(target, ast.Name) and target.id in ("code", "default_code", "CODE"):
                    codes.add(node.value.value)
            elif isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in PROBLEM_CALLS:
                    codes.add(node.args[1].value)
    return {code for code in codes if isinstance(code, str)}


def test_every_code_the_source_can_raise_has_its_own_page_text():
    codes = raised_codes()
    assert len(codes) > 100  # the scan finds them
    assert sorted(codes - set(PROBLEM_TYPES)) == []


def test_docs_problems_md_is_the_generated_text():
    assert (REPO / "docs" / "problems.md").read_text() == problems_markdown(), "run manage.py problems_doc"


@pytest.mark.django_db
def test_the_type_url_of_a_real_error_answers_a_page_for_people(api_client, client, settings):
    problem = api_client.post("/api/v1/drafts", {"network": "Nowhere"}, format="json").json()
    path = problem["type"].removeprefix(settings.BASE_URL)
    assert path == f"/problems/{problem['code']}"
    page = client.get(path, HTTP_ACCEPT="text/html")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    assert problem["code"] in page.content.decode()
    missing = client.get("/problems/missing_scope").content.decode()
    assert "lacks the scope" in missing  # the entry's own text
    general = client.get("/problems/max_digits").content.decode()  # a DRF field code: the general page
    assert "errors" in general
    assert client.get("/problems/Not-A-Code").status_code == 404

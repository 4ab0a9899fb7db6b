"""Every domain Problem renders as RFC 9457: an integer status, no extension overwriting a member."""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

import pytest
from django.apps import apps

from core.api.problems import problem_exception_handler
from core.problems import Problem, problem_document
from tests.factories import make_draft

RFC_MEMBERS = {"type", "title", "status", "detail", "instance"}


def _all_problem_classes() -> list[type[Problem]]:
    root = str(Path(__file__).resolve().parents[2])
    for config in apps.get_app_configs():
        if not config.path.startswith(root + "/") or "site-packages" in config.path:
            continue  # third-party apps
        for module in pkgutil.walk_packages([config.path], prefix=f"{config.name}."):
            if ".migrations" not in module.name and ".management" not in module.name:
                importlib.import_module(module.name)
    found, todo = set(), [Problem]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__qualname__}")


@pytest.mark.parametrize("problem_class", _all_problem_classes(), ids=lambda c: c.__qualname__)
def test_every_problem_renders_with_an_integer_status(problem_class):
    problem = problem_class("Something is off.", field="amountSats", extra={"draftId": "x"})
    response = problem_exception_handler(problem, {})
    body = json.loads(response.content)
    assert type(body["status"]) is int and body["status"] == response.status_code == problem.status_code
    assert response["Content-Type"] == "application/problem+json"
    assert body["code"] == problem.code and body["errors"][0]["field"] == "amountSats"


def test_an_extension_may_not_take_an_rfc_member_name():
    for name in RFC_MEMBERS:
        with pytest.raises(ValueError):
            Problem("x", extra={name: "Cancelled"})


def test_the_problem_document_keeps_the_integer_status_whatever_the_extension():
    body = problem_document(409, "invalid_state", "No.", extra={"draftStatus": "Cancelled"})
    assert body["status"] == 409 and body["draftStatus"] == "Cancelled"


@pytest.mark.django_db
@pytest.mark.parametrize("action", ["cancel", "accept-received", "requote"])
def test_a_409_from_a_draft_action_has_an_integer_status_and_names_the_draft_status(api_client, owner, action):
    draft = make_draft(owner, status="Cancelled")
    response = api_client.post(f"/api/v1/drafts/{draft.id}/{action}")
    body = response.json()
    assert response.status_code == 409 and body["status"] == 409
    assert body["draftStatus"] == "Cancelled"

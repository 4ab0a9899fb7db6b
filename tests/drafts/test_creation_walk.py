"""A newcomer's walk from POST /api/v1/drafts to the INSERT of the draft passes at most 10 of the
project's functions, the ones docs/architecture.md lists as its worked example: this follows a
real creation through the interpreter (sys.setprofile) and compares the chain of the project's
functions on the stack when the draft's INSERT is sent with the table in the doc."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from django.db import connection

from tests.drafts.conftest import ADDRESSES

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
MAX_FUNCTIONS = 10
PROJECT_OUTSIDE = ("tests", ".venv", "node_modules")  # code under ROOT that is not the project's
ROW = re.compile(r"^\| (\d+) \| `([\w.]+)` \| `([\w/]+\.py)` \|")

EXACT = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 25_000_000}
FIAT = {
    "network": "Base",
    "currency": "USDC",
    "receiverAddress": ADDRESSES["Base"],
    "fiatCurrency": "EUR",
    "fiatAmount": 25,
}


def documented_walk() -> list[tuple[str, str]]:
    """The worked example's rows, (module file, function), in their order."""
    text = DOC.read_text()
    table = text.split("<!-- creation-walk -->", 1)[1].split("<!-- /creation-walk -->", 1)[0]
    rows = [ROW.match(line) for line in table.splitlines()]
    found = [(m.group(3), m.group(2)) for m in rows if m is not None]
    assert [int(m.group(1)) for m in rows if m is not None] == list(range(1, len(found) + 1))
    return found


def project_place(frame: FrameType) -> tuple[str, str] | None:
    """(module file relative to the repository, qualified name) of a frame of the project's own code."""
    path = Path(frame.f_code.co_filename)
    if not path.is_relative_to(ROOT):
        return None
    relative = path.relative_to(ROOT)
    if relative.parts[0] in PROJECT_OUTSIDE:
        return None
    return relative.as_posix(), frame.f_code.co_qualname


def walk_to_the_insert(send: Any) -> tuple[list[tuple[str, str]], set[tuple[str, str]]]:
    """Runs `send()` under a profiler: the chain of project functions on the stack, from the
    view down, when the draft's INSERT goes to the database; and every project function that
    ran between the view's start and that INSERT (what a reader might step into)."""
    chains: list[list[tuple[str, str]]] = []
    entered: set[tuple[str, str]] = set()
    view = ("drafts/api/views.py", "DraftViewSet.create")

    def inserting(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if 'INSERT INTO "drafts_draft"' in sql and not chains:
            chain = []
            frame: FrameType | None = sys._getframe(1)
            while frame is not None:
                place = project_place(frame)
                if place is not None:
                    chain.append(place)
                frame = frame.f_back
            chain.reverse()
            chains.append(chain[chain.index(view) :] if view in chain else chain)
        return execute(sql, params, many, context)

    def profiler(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and not chains and (place := project_place(frame)) is not None:
            if place == view or entered:
                entered.add(place)

    with connection.execute_wrapper(inserting):
        sys.setprofile(profiler)
        try:
            response = send()
        finally:
            sys.setprofile(None)
    assert response.status_code == 201, response.json()
    assert len(chains) == 1, "the draft's INSERT was not seen"
    return chains[0], entered


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "headers"),
    [(EXACT, {"HTTP_IDEMPOTENCY_KEY": "walk-1"}), (FIAT, {})],
    ids=["exact-with-a-key", "fiat-priced-without"],
)
def test_the_walk_from_the_url_to_the_insert_is_the_documented_one(create, body, headers):
    documented = documented_walk()
    assert 0 < len(documented) <= MAX_FUNCTIONS

    chain, entered = walk_to_the_insert(lambda: create(body, **headers))

    assert chain == documented
    assert len(set(chain)) <= MAX_FUNCTIONS
    # Every step the doc names ran, and the walk began at the view.
    assert set(documented) <= entered


def test_the_documented_walk_names_functions_that_exist():
    for module_file, qualname in documented_walk():
        module = __import__(module_file.removesuffix(".py").replace("/", "."), fromlist=["_"])
        target: Any = module
        for part in qualname.split("."):
            target = getattr(target, part)
        assert callable(target), (module_file, qualname)

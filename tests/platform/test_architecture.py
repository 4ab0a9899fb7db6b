"""The layers of docs/architecture.md, kept: each app imports only the layers below it, DRF at
the edge, private database internals in core/sql/ only."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = sorted(
    p.name
    for p in ROOT.iterdir()
    if (p / "apps.py").exists() or (p.is_dir() and p.name in ("outbound", "mcp_server", "config"))
)
# From the ground up (docs/architecture.md). A package imports only packages of lower layers.
# An app's api/ modules are its REST edge: they sit above every domain app (they may call any
# of them, and share serializers with each other). An import of one is an import of the REST
# edge, from another app or from its own: a module of paylinks importing paylinks.api imports upward.
REST = "*/api"
LAYERS: list[tuple[str, ...]] = [
    ("core", "outbound"),  # ground: problems, wire formats, SQL machinery, API base classes
    ("notifications", "payments", "suggestions", "audit"),  # base (audit: the append-only log)
    ("accounts", "addressbook"),
    ("fees", "webhooks", "wallets"),  # wallets: receiving wallets (descriptors), below drafts
    ("drafts",),
    ("chainwatch", "paylinks", "recurring", "demo"),
    ("refunds",),  # its claim page shares the pay page's policy and per-address budget
    ("attention",),  # what waits for the merchant: reads every domain app above
    (REST,),  # every app's api/ (core/api/ excepted: base classes): the REST edge
    ("dashboard", "mcp_server"),  # surfaces
    ("about",),  # what the service says of itself (llms.txt lists the MCP tools)
    ("config",),  # wiring: settings, URLs, WSGI/ASGI, Celery
]
LAYER_OF = {app: n for n, layer in enumerate(LAYERS) for app in layer}
GROUND_MODULES = ("core/problems.py", "core/wire.py", "core/env.py")
# The MCP server renders through REST's own serializers and exception handler (one schema, one problem body).
DRF_ALLOWED = ("/api/", "config/", "accounts/authentication.py", "accounts/permissions.py", "mcp_server/")


def _imports(path: Path) -> list[str]:
    """Every module `path` imports, by its full name (a relative import resolved)."""
    found = []
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1]) if path.is_relative_to(ROOT) else ""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1] if package else []
                base = ".".join([*parent, base] if base else parent)
            # `from x import y` may import the module x.y: both are named
            found.append(base)
            found.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


def _source_files():
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" not in path.parts:
                yield path


def test_rest_framework_is_imported_only_at_the_edge():
    offenders = [
        str(path.relative_to(ROOT))
        for path in _source_files()
        if any(m.split(".")[0] in ("rest_framework", "drf_spectacular") for m in _imports(path))
        and not any(part in f"/{path.relative_to(ROOT)}" for part in DRF_ALLOWED)
    ]
    assert offenders == []


def _package_of_module(module: str) -> str | None:
    """The layer's package a module belongs to: `<app>/api` for an app's REST edge (core/api/
    excepted: base classes on the ground), else its app; None outside the project."""
    parts = module.split(".")
    if parts[0] not in APPS:
        return None
    return f"{parts[0]}/api" if len(parts) > 1 and parts[1] == "api" and parts[0] != "core" else parts[0]


def _package_of(path: Path) -> str:
    return _package_of_module(".".join(path.relative_to(ROOT).with_suffix("").parts))


def _layer_of(package: str) -> int:
    return LAYER_OF[REST] if package.endswith("/api") else LAYER_OF[package]


def _edges() -> dict[str, set[str]]:
    """Package -> the other packages its modules import, within an app too (a module of an app
    importing that app's api/ imports the REST edge)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for path in _source_files():
        package = _package_of(path)
        for module in _imports(path):
            target = _package_of_module(module)
            if target is not None and target != package:
                edges[package].add(target)
    return edges


def _against_the_layers(edges: dict[str, set[str]]) -> list[str]:
    """Imports of a package's own layer or one above; the REST edge's modules may import each
    other (shared serializers)."""
    return sorted(
        f"{package} -> {target}"
        for package, targets in edges.items()
        for target in targets
        if _layer_of(target) > _layer_of(package)
        or (_layer_of(target) == _layer_of(package) and _layer_of(package) != LAYER_OF[REST])
    )


def test_every_package_has_a_layer():
    assert sorted(set(APPS) - set(LAYER_OF)) == []


def test_each_package_imports_only_lower_layers():
    against = _against_the_layers(_edges())
    importers = sorted(
        f"{path.relative_to(ROOT)}: {module}"
        for path in _source_files()
        for module in _imports(path)
        if f"{_package_of(path)} -> {_package_of_module(module)}" in against
    )
    assert against == [], importers


def test_the_layer_check_finds_an_upward_import():
    edges = {
        "core": {"drafts"},
        "drafts": {"fees"},
        "fees": {"webhooks"},
        "fees/api": {"drafts"},
        "drafts/api": {"mcp_server", "fees/api", "drafts"},
        "paylinks": {"paylinks/api", "drafts"},
    }
    assert _against_the_layers(edges) == [
        "core -> drafts",
        "drafts/api -> mcp_server",
        "fees -> webhooks",
        "paylinks -> paylinks/api",
    ]


def test_an_import_names_its_module(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from paylinks.api.views import X\nfrom paylinks import api\nimport refunds.api.urls\n")
    assert {_package_of_module(m) for m in _imports(sample)} == {"paylinks", "paylinks/api", "refunds/api"}


def test_no_two_apps_import_each_other():
    edges = _edges()

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges[start])

    circles = sorted({tuple(sorted((a, b))) for a in list(edges) for b in edges[a] if reaches(b, a, {b})})
    assert circles == []


def test_the_ground_modules_import_no_app():
    for name in GROUND_MODULES:
        imported = {m.split(".")[0] for m in _imports(ROOT / name)}
        assert not imported & set(APPS), name


# Django's private state of rows and connections, psycopg itself and tables named in raw SQL:
# only core/sql/ touches them, behind its public functions (core.sql.state, core.sql.rows).
PRIVATE_ATTRIBUTES = frozenset(
    {
        "_state",
        "run_on_commit",
        "in_atomic_block",
        "needs_rollback",
        "savepoint_ids",
        "execute_wrappers",
        "queries_logged",
        "db_table",
    }
)
PRIVATE_MODULES = ("psycopg", "django.db.backends", "django.db.models.sql")


def _private_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
            found.append(f"{node.lineno}: .{node.attr}")
    found += [m for m in _imports(path) if m.startswith(PRIVATE_MODULES)]
    return found


def test_private_database_internals_are_used_only_in_core_sql():
    offenders = {
        str(path.relative_to(ROOT)): uses
        for path in _source_files()
        if path.relative_to(ROOT).parts[:2] != ("core", "sql") and (uses := _private_uses(path))
    }
    assert offenders == {}


def test_the_private_names_check_finds_them(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from psycopg import _queries\nx = row._state.adding\nc.run_on_commit\n")
    assert sorted(_private_uses(sample)) == ["2: ._state", "3: .run_on_commit", "psycopg", "psycopg._queries"]


# SQL text lives in core/sql/ only (docs/architecture.md): elsewhere a module calls a function
# there, built from the models' metadata; it writes no statement, opens no cursor, and asks
# for no raw query (migrations, history as it ran, aside).
SQL_TEXT = re.compile(
    r"\bSELECT\s.*\bFROM\s|\bSELECT\s+\d|\bINSERT\s+INTO\s|\bUPDATE\s+\S+\s+SET\s|\bDELETE\s+FROM\s|\bON\s+CONFLICT\b",
    re.DOTALL,
)
RAW_SQL_CALLS = frozenset({"cursor", "raw", "RawSQL", "extra"})


def _raw_sql(path: Path) -> list[str]:
    """Where a module runs SQL of its own: a call that opens a cursor or asks for a raw query,
    or a string (an f-string's text included) holding a statement. Docstrings may name one."""
    tree = ast.parse(path.read_text())
    documented = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in RAW_SQL_CALLS:
                found.append(f"{node.lineno}: {name}()")
        elif isinstance(node, ast.JoinedStr):
            text = "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
            if SQL_TEXT.search(text):
                found.append(f"{node.lineno}: SQL")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in documented:
            if SQL_TEXT.search(node.value):
                found.append(f"{node.lineno}: SQL")
    return sorted(set(found), key=lambda f: (int(f.partition(":")[0]), f))


def test_sql_is_written_only_in_core_sql():
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in _source_files()
        if path.relative_to(ROOT).parts[:2] != ("core", "sql") and (found := _raw_sql(path))
    }
    assert offenders == {}


def test_the_sql_check_finds_it(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""A module that says SELECT ... FOR UPDATE in its docstring, which is fine."""\n'
        "with connection.cursor() as cursor:\n"
        '    cursor.execute(f"INSERT INTO {table} ({columns}) VALUES (%s) ON CONFLICT DO NOTHING")\n'
        'rows = Draft.objects.raw("SELECT * FROM drafts_draft")\n'
        'QUERY = "UPDATE config_lease SET holder = %s WHERE name = %s"\n'
        'PROBE = "SELECT 1"\n'
        'note = "the payer selects an option from the list"\n'  # words, not SQL: left alone
    )
    assert _raw_sql(sample) == ["2: cursor()", "3: SQL", "4: SQL", "4: raw()", "5: SQL", "6: SQL"]


# No patch of a library's internals anywhere, core/sql/ included: only public, documented APIs
# (Django's cursor and database wrappers, psycopg's adapters and `prepare_threshold`, settings
# read as Django reads them), so an upgrade of Django or psycopg, or a tracer that hooks
# Django's cursor, finds them as documented.
CURSOR_BYPASSES = frozenset({"create_cursor", "wrap_database_errors", "validate_no_broken_transaction"})


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _library_patches(path: Path) -> list[str]:
    """What a module does to a library's internals: writes an attribute of one of the library's
    modules or classes it imported (`LazySettings.__getattribute__ = ...`, a constant of
    psycopg), imports a private module of a library (`psycopg._queries`), or runs a statement
    around Django's cursor (its `create_cursor`, `wrap_database_errors`...)."""
    tree = ast.parse(path.read_text())
    libraries: set[str] = set()  # names this module bound to a library's module or class
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            libraries.update((a.asname or a.name).split(".")[0] for a in node.names if not _package_of_module(a.name))
        elif isinstance(node, ast.ImportFrom) and not node.level and not _package_of_module(node.module or ""):
            libraries.update(alias.asname or alias.name for alias in node.names)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            found += [
                f"{node.lineno}: {ast.unparse(t)} ="
                for t in targets
                if isinstance(t, ast.Attribute) and _root_name(t) in libraries
            ]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            if node.args and _root_name(node.args[0]) in libraries:
                found.append(f"{node.lineno}: {node.func.id}({ast.unparse(node.args[0])}, ...)")
        elif isinstance(node, ast.Attribute) and node.attr in CURSOR_BYPASSES:
            found.append(f"{node.lineno}: .{node.attr}")
    found += sorted(
        {
            module
            for module in _imports(path)
            if not _package_of_module(module)
            and any(part.startswith("_") and not part.startswith("__") for part in module.split("."))
        }
    )
    return found


def test_no_library_internals_are_patched_or_bypassed():
    offenders = {
        str(path.relative_to(ROOT)): [f.partition(": ")[2] or f for f in found]  # without line numbers
        for path in _source_files()
        if (found := _library_patches(path))
    }
    assert offenders == {}


def test_the_patch_check_finds_them(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from django.conf import LazySettings\n"
        "from psycopg import _queries as q\n"
        "import psycopg._queries\n"
        "LazySettings.__getattribute__ = object.__getattribute__\n"
        "q.MAX_CACHED_STATEMENT_PARAMS = 256\n"
        "setattr(psycopg._queries, 'MAX_CACHED_STATEMENT_LENGTH', 8192)\n"
        "with connection.create_cursor() as cursor:\n"
        "    pass\n"
        "row.adding = True\n"  # not a library's: left alone
    )
    assert sorted(_library_patches(sample)) == [
        "4: LazySettings.__getattribute__ =",
        "5: q.MAX_CACHED_STATEMENT_PARAMS =",
        "6: setattr(psycopg._queries, ...)",
        "7: .create_cursor",
        "psycopg._queries",
    ]

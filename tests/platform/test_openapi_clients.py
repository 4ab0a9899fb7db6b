"""The OpenAPI document works with a common client generator, and /swagger hands the document
itself to a client that asks for JSON or YAML (the interactive page to browsers)."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.django_db

GENERATOR = Path(sys.executable).parent / "openapi-python-client"


def test_each_request_body_is_declared_under_one_content_type(anon_client):
    document = anon_client.get("/api/v1/schema").json()
    bodies = {
        f"{method.upper()} {path}": sorted(operation["requestBody"]["content"])
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict) and "requestBody" in operation
    }
    assert bodies and {types[0] for types in bodies.values()} == {"application/json"}
    assert [name for name, types in bodies.items() if len(types) != 1] == []


def test_no_schema_names_a_type_twice(anon_client):
    text = anon_client.get("/api/v1/schema").content.decode()

    def walk(node):
        if isinstance(node, dict):
            types = node.get("type")
            if isinstance(types, list):
                assert len(types) == len(set(types)), node
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(json.loads(text))


@pytest.mark.slow
def test_openapi_python_client_generates_a_client_whose_every_module_imports(anon_client, tmp_path, monkeypatch):
    spec = tmp_path / "openapi.json"
    spec.write_bytes(anon_client.get("/api/v1/schema").content)
    generated = subprocess.run(  # noqa: S603
        [str(GENERATOR), "generate", "--path", str(spec), "--output-path", str(tmp_path / "client")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr
    assert "Warning" not in generated.stdout, generated.stdout
    (package,) = [p for p in (tmp_path / "client").iterdir() if (p / "__init__.py").exists()]
    monkeypatch.syspath_prepend(str(tmp_path / "client"))
    modules = sorted(
        ".".join(path.relative_to(tmp_path / "client").with_suffix("").parts).removesuffix(".__init__")
        for path in package.rglob("*.py")
    )
    failures = {}
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - every failure is reported at once
            failures[name] = repr(exc)
    for name in list(sys.modules):
        if name == package.name or name.startswith(package.name + "."):
            del sys.modules[name]
    shutil.rmtree(tmp_path / "client")
    assert len(modules) > 50
    assert failures == {}


def test_swagger_gives_the_document_to_a_client_asking_for_json_or_yaml(anon_client):
    as_json = anon_client.get("/swagger", HTTP_ACCEPT="application/json")
    assert as_json.status_code == 200 and as_json.json()["openapi"].startswith("3.")
    as_yaml = anon_client.get("/swagger", HTTP_ACCEPT="application/yaml")
    assert as_yaml.status_code == 200 and yaml.safe_load(as_yaml.content)["info"]["version"] == "v1"
    browser = anon_client.get("/swagger", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert browser.status_code == 200 and browser["Content-Type"].startswith("text/html")

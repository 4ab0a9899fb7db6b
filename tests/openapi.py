"""Check bodies against the live OpenAPI document's components (OpenAPI 3.0 `nullable` included)."""

from __future__ import annotations

import copy
import functools
from typing import Any

from drf_spectacular.generators import SchemaGenerator
from jsonschema import Draft202012Validator


@functools.cache
def document() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema -> JSON Schema: `nullable: true` becomes an explicit null option."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _json_schema(value) for key, value in node.items()}
    if node.pop("nullable", False):
        if "type" in node and "enum" not in node:
            node["type"] = [node["type"], "null"]
        else:
            return {"anyOf": [node, {"type": "null"}]}
    return node


@functools.cache
def _components() -> dict[str, Any]:
    return _json_schema(copy.deepcopy(document()["components"]))


def errors_against(body: Any, component: str) -> list[str]:
    """Every way `body` breaks the named component schema (empty when it conforms)."""
    schema = {"$ref": f"#/components/schemas/{component}", "components": _components()}
    return [f"{list(e.absolute_path)}: {e.message}" for e in Draft202012Validator(schema).iter_errors(body)]

"""OpenAPI generation tweaks: required scopes per operation, strict object schemas."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema

from accounts.permissions import required_scope_for

PAGE_ENVELOPE = {"items", "page", "pageSize", "total"}


class ServiceAutoSchema(AutoSchema):
    def _is_list_view(self, serializer=None) -> bool:
        """A `list` action answering the paged envelope {items, page, pageSize, total} is one object."""
        if serializer is None:
            serializer = self.get_response_serializers()
        if isinstance(serializer, dict) and serializer:
            serializer = serializer[min(serializer, key=str)]
        fields = getattr(serializer, "_declared_fields", None)
        if fields is not None and PAGE_ENVELOPE <= set(fields):
            return False
        return super()._is_list_view(serializer)

    def get_operation_id(self) -> str:
        operation_id = super().get_operation_id()
        if getattr(self.view, "action", None) == "list" and operation_id.endswith("_retrieve"):
            return operation_id.removesuffix("_retrieve") + "_list"  # keep "list" for paged lists
        return operation_id

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        scope = required_scope_for(self.view, method.upper())
        if scope:
            operation["x-required-scopes"] = [scope]
            note = f"Required API key scope: `{scope}`."
        elif getattr(self.view, "session_only", False):
            note = "Needs a logged-in session; API keys are refused."
        else:
            note = ""
        if note:
            description = operation.get("description", "")
            operation["description"] = f"{description}\n\n{note}".strip()
        return operation


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiKeyAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "pdk_ API key",
            "description": "A scoped API key: `Authorization: Bearer pdk_...`.",
        }


def reject_unknown_properties(result, generator, request, public):
    """Every object schema rejects unknown properties (additionalProperties false)."""
    for schema in result.get("components", {}).get("schemas", {}).values():
        if schema.get("type") == "object" and "properties" in schema and "additionalProperties" not in schema:
            schema["additionalProperties"] = False
    return result


def document_location_on_created(result, generator, request, public):
    """Every 201 names the new resource in a Location header (decisions.md, wire conventions)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            created = operation.get("responses", {}).get("201") if isinstance(operation, dict) else None
            if created is not None:
                created.setdefault("headers", {})["Location"] = {
                    "description": "Absolute URL of the created resource",
                    "required": True,
                    "schema": {"type": "string", "format": "uri"},
                }
    return result

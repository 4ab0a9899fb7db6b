"""The OpenAPI document: /api/v1/schema, /swagger, and the document llms.txt is built from."""

from __future__ import annotations

import functools

from django.http import HttpRequest, HttpResponse
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import (
    OpenApiJsonRenderer,
    OpenApiJsonRenderer2,
    OpenApiYamlRenderer,
    OpenApiYamlRenderer2,
)
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView


class SchemaView(SpectacularAPIView):
    """The OpenAPI document: JSON by default, YAML with ?format=yaml or Accept: application/yaml."""

    renderer_classes = [OpenApiJsonRenderer, OpenApiJsonRenderer2, OpenApiYamlRenderer, OpenApiYamlRenderer2]


_swagger_page = SpectacularSwaggerView.as_view(url_name="schema")
_schema_document = SchemaView.as_view()


def swagger(request: HttpRequest, *args, **kwargs) -> HttpResponse:
    """/swagger: the OpenAPI document itself to a client asking for JSON or YAML, the page to browsers."""
    accept = request.headers.get("Accept", "").lower()
    if ("json" in accept or "yaml" in accept) and "text/html" not in accept:
        return _schema_document(request, *args, **kwargs)
    return _swagger_page(request, *args, **kwargs)


@functools.lru_cache(maxsize=1)
def openapi_document() -> dict:
    return SchemaGenerator(patterns=None).get_schema(request=None, public=True)

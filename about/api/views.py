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

    def perform_content_negotiation(self, request, force=False):
        """`?format=yaml` or `?format=json` picks the renderer (the API turns DRF's URL format
        override off everywhere else); otherwise the Accept header does."""
        wanted = request.query_params.get("format")
        for renderer in self.get_renderers():
            if wanted is not None and renderer.format == wanted:
                return renderer, renderer.media_type
        return super().perform_content_negotiation(request, force)


_swagger_page = SpectacularSwaggerView.as_view(url_name="schema")
_schema_document = SchemaView.as_view()


def swagger(request: HttpRequest, *args, **kwargs) -> HttpResponse:
    """/swagger: the OpenAPI document itself to a client asking for JSON or YAML, the page to browsers."""
    accept = request.headers.get("Accept", "").lower()
    if request.GET.get("format") in ("json", "yaml") or (
        ("json" in accept or "yaml" in accept) and "text/html" not in accept
    ):
        return _schema_document(request, *args, **kwargs)
    return _swagger_page(request, *args, **kwargs)


@functools.lru_cache(maxsize=1)
def openapi_document() -> dict:
    return SchemaGenerator(patterns=None).get_schema(request=None, public=True)

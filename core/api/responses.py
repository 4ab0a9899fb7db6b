"""Success responses that follow the wire conventions of decisions.md.

201 is only for creating drafts, demo drafts, payment requests, refunds and fee settlements, and
always carries a Location header naming the new resource; every other success is 200
with a body.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.http import HttpRequest
from django.urls import get_script_prefix, get_urlconf, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

if TYPE_CHECKING:
    from rest_framework.request import Request

# A resource's path differs only by its id: reversed once per route with a stand-in id
# (Django's reverse took 2-3% of a creation's CPU), then the id put in its place.
_STAND_IN = "00000000-0000-4000-8000-00000000c0de"
_UUID_TEXT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PATHS: dict[tuple[str, str, str | None, str], str] = {}


def resource_url(url_name: str, **kwargs: Any) -> str:
    """The absolute public URL (BASE_URL) of a named route."""
    if len(kwargs) == 1:
        ((name, value),) = kwargs.items()
        text = str(value)
        if _UUID_TEXT.fullmatch(text):  # nothing in it to quote; the route accepts the stand-in too
            route = (url_name, name, get_urlconf(), get_script_prefix())
            path = _PATHS.get(route)
            if path is None:
                path = _PATHS[route] = reverse(url_name, kwargs={name: _STAND_IN})
            return settings.BASE_URL + path.replace(_STAND_IN, text)
    return settings.BASE_URL + reverse(url_name, kwargs=kwargs)


def created_response(body: Any, *, location: str, headers: dict[str, str] | None = None) -> Response:
    """A 201 with the new resource's body and its Location."""
    return Response(body, status=201, headers={"Location": location, **(headers or {})})


# Every POST that creates takes it (docs/idempotency.md).
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="Makes retries safe: the same key and body answer the first response again (24 h, per account)",
)


def idempotency_key_of(request: HttpRequest | Request) -> str | None:
    """The request's Idempotency-Key header, if any (read from META: `request.headers` would
    build a map of every header first)."""
    key: str | None = request.META.get("HTTP_IDEMPOTENCY_KEY")
    return key


def outcome_response(outcome: Any, *, url_name: str) -> Response:
    """The answer of an idempotent creation (drafts.idempotency.Outcome: status, body, replayed):
    201 with its Location, a stored problem as problem+json, and `Idempotent-Replayed` on replays."""
    response = Response(outcome.body, status=outcome.status)
    if outcome.status == 201:
        response["Location"] = resource_url(url_name, pk=outcome.body["id"])
    if outcome.status >= 400:
        response.content_type = "application/problem+json"
    if outcome.replayed:
        response["Idempotent-Replayed"] = "true"
    return response

"""Success responses that follow the wire conventions of decisions.md.

201 is only for creating drafts, demo drafts, payment requests and fee settlements, and
always carries a Location header naming the new resource; every other success is 200
with a body.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from rest_framework.response import Response


def resource_url(url_name: str, **kwargs: Any) -> str:
    """The absolute public URL (BASE_URL) of a named route."""
    return settings.BASE_URL + reverse(url_name, kwargs=kwargs)


def created_response(body: Any, *, location: str, headers: dict[str, str] | None = None) -> Response:
    """A 201 with the new resource's body and its Location."""
    return Response(body, status=201, headers={"Location": location, **(headers or {})})


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

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

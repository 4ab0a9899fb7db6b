"""The one pattern for ids in URLs: a UUID in its canonical hyphenated form, either case.

Routers use ``UUID_PATTERN`` as ``lookup_value_regex``; plain ``path()`` routes use the
``<id:name>`` converter registered here (the value reaches the view as a ``uuid.UUID``). Any
other id shape matches no route, so it is a 404 before a view runs.
"""

from __future__ import annotations

import uuid

from django.urls import register_converter

UUID_PATTERN = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


class IdConverter:
    regex = UUID_PATTERN

    def to_python(self, value: str) -> uuid.UUID:
        return uuid.UUID(value)

    def to_url(self, value: uuid.UUID | str) -> str:
        return str(value)


register_converter(IdConverter, "id")

"""Request bodies: application/json, text/json and any application/*+json."""

from __future__ import annotations

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser


def is_json_media_type(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type in ("application/json", "text/json"):
        return True
    main, _, sub = media_type.partition("/")
    return main == "application" and sub.endswith("+json")


class JsonParser(JSONParser):
    media_type = "application/json"


class TextJsonParser(JSONParser):
    media_type = "text/json"


class StructuredJsonParser(JSONParser):
    """application/*+json (e.g. application/merge-patch+json); matched by JsonNegotiation."""

    media_type = "application/*+json"


class JsonNegotiation(DefaultContentNegotiation):
    """Pick the JSON parser for every JSON media type (DRF matches only exact subtypes)."""

    def select_parser(self, request, parsers):
        content_type = request.content_type or ""
        if is_json_media_type(content_type):
            for parser in parsers:
                if isinstance(parser, JSONParser):
                    return parser
        return super().select_parser(request, parsers)

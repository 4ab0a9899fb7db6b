"""Request bodies: application/json, text/json and any application/*+json.

JSON numbers with a fraction or exponent parse as Decimal, so money never passes
through a binary float.
"""

from __future__ import annotations

import codecs
import json
from decimal import Decimal

from rest_framework.exceptions import ParseError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.utils.json import strict_constant


def is_json_media_type(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type in ("application/json", "text/json"):
        return True
    main, _, sub = media_type.partition("/")
    return main == "application" and sub.endswith("+json")


class JsonParser(JSONParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding") or "utf-8"
        try:
            return json.load(codecs.getreader(encoding)(stream), parse_float=Decimal, parse_constant=strict_constant)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc


class TextJsonParser(JsonParser):
    media_type = "text/json"


class StructuredJsonParser(JsonParser):
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

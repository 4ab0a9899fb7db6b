"""Request bodies: application/json, text/json and any application/*+json.

Strict on purpose: JSON numbers with a fraction or exponent parse as Decimal (money never
passes through a binary float), NaN/Infinity and duplicate keys are refused, nesting deeper
than API_MAX_JSON_DEPTH is refused before the parser runs (CPython's C parser recurses per
level), and an integer too long to convert cheaply becomes a Decimal that every integer field
refuses by range, so no error text shows interpreter internals.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from itertools import accumulate
from typing import IO, TYPE_CHECKING, Any

from django.conf import settings
from rest_framework.exceptions import ErrorDetail, ParseError, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser, JSONParser
from rest_framework.utils.json import strict_constant

if TYPE_CHECKING:  # annotations only: DRF's request imports this module through the settings
    from rest_framework.renderers import BaseRenderer
    from rest_framework.request import Request

# Longer integers stay exact as Decimal; int() of thousands of digits is slow and refused by
# CPython past 4300 digits with a message about sys.set_int_max_str_digits().
MAX_INT_DIGITS = 100
_OPENERS = frozenset(b"[{")
_BRACKETS_ONLY = bytes(range(256)).translate(None, b"[]{}")  # every byte except the brackets


class LongInteger(Decimal):
    """A JSON integer with more than MAX_INT_DIGITS digits (always out of any field's range)."""


def _parse_int(text: str) -> int | Decimal:
    if len(text) > MAX_INT_DIGITS:
        return LongInteger(text)
    return int(text)


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            # A field error naming the key: "last one wins" would act on a value the client may not mean.
            raise ValidationError({key: [ErrorDetail("Given more than once in the JSON object.", "duplicate_key")]})
        found[key] = value
    return found


def _strip_strings(data: str) -> str:
    """The body without the contents of its strings, so brackets inside strings do not count."""
    out, index, length = [], 0, len(data)
    while index < length:
        quote = data.find('"', index)
        if quote < 0:
            out.append(data[index:])
            break
        out.append(data[index:quote])
        index = quote + 1
        while True:  # find the closing quote, skipping escaped characters
            end = data.find('"', index)
            if end < 0:
                return "".join(out)  # unterminated string: the parser reports it
            backslashes = 0
            while data[end - 1 - backslashes] == "\\":
                backslashes += 1
            index = end + 1
            if backslashes % 2 == 0:
                break
    return "".join(out)


def json_depth(data: str) -> int:
    """Deepest nesting of arrays and objects in a JSON text (0 for a scalar)."""
    brackets = _strip_strings(data).encode("utf-8", "surrogatepass").translate(None, _BRACKETS_ONLY)
    if not brackets:
        return 0
    return max(accumulate(1 if byte in _OPENERS else -1 for byte in brackets))


def parse_json(data: str) -> Any:
    """Parse a JSON text strictly (see the module docstring); ParseError says why not."""
    limit = settings.API_MAX_JSON_DEPTH
    # No deeper than the brackets it opens (counting those in strings too): most bodies open
    # fewer than the limit, and need no closer look.
    if data.count("{") + data.count("[") > limit and json_depth(data) > limit:
        raise ParseError(f"JSON parse error - nesting deeper than {limit} levels.", code="too_deep")
    try:
        return json.loads(
            data,
            parse_float=Decimal,
            parse_int=_parse_int,
            parse_constant=strict_constant,
            object_pairs_hook=_no_duplicate_keys,
        )
    except ValueError as exc:
        raise ParseError(f"JSON parse error - {exc}") from exc


class StrictJsonParser(JSONParser):
    """The strict parse; each media type is its own subclass (the schema names application/json only)."""

    def parse(
        self, stream: IO[Any] | None, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        encoding = (parser_context or {}).get("encoding") or "utf-8"
        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise ParseError(f"JSON parse error - the body is not valid {encoding}.") from exc
        return parse_json(text)


class JsonParser(StrictJsonParser):
    media_type = "application/json"


class TextJsonParser(StrictJsonParser):
    media_type = "text/json"


class StructuredJsonParser(StrictJsonParser):
    """application/*+json (e.g. application/merge-patch+json); matched by JsonNegotiation."""

    media_type = "application/*+json"


class JsonNegotiation(DefaultContentNegotiation):
    """Pick the JSON parser for every JSON media type (DRF matches only exact subtypes).

    The answer's renderer: what clients send nearly always (no Accept, `*/*` or exactly the
    first renderer's type) picks the first renderer at once, as DRF's negotiation would after
    parsing the header; anything else goes through DRF's (406 for what none can render)."""

    def select_renderer(  # type: ignore[override]  # DRF passes the view's list; its stubs say any Iterable
        self, request: Request, renderers: Sequence[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        override = self.settings.URL_FORMAT_OVERRIDE
        if format_suffix is None and renderers and not (override and request.query_params.get(override)):
            if request.META.get("HTTP_ACCEPT", "*/*") in ("*/*", renderers[0].media_type):
                return renderers[0], renderers[0].media_type
        chosen: tuple[BaseRenderer, str] = super().select_renderer(request, renderers, format_suffix)
        return chosen

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        content_type = request.content_type or ""
        if is_json_media_type(content_type):
            for parser in parsers:
                if isinstance(parser, JSONParser):
                    return parser
        return super().select_parser(request, parsers)


def is_json_media_type(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type in ("application/json", "text/json"):
        return True
    main, _, sub = media_type.partition("/")
    return main == "application" and sub.endswith("+json")

"""How numbers and times look on the wire: one format for API bodies, webhook payloads and
events (decisions.md, Wire conventions)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any


def json_number(value: Decimal | int | None) -> int | float | None:
    """A Decimal as a JSON number: an int when integral (25, not 25.0), else a float.

    Only at the edge: the service itself computes with Decimal and integer base units.
    """
    if value is None:
        return None
    value = Decimal(value)
    if not value.is_finite():
        raise ValueError(f"{value} is not a number JSON can carry")
    if value == value.to_integral_value():
        return int(value)
    return float(value)


def json_datetime(value: datetime | None) -> str | None:
    """RFC 3339 in UTC ending in Z, microseconds kept when present."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetimes have no place on the wire")
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


class EncodedJson(dict[str, Any]):
    """A JSON object and its encoding as the API sends it (core.api.renderers.encoded): a body
    both stored and sent, such as an idempotent creation's answer, is encoded once."""

    __slots__ = ("content",)

    def __init__(self, body: dict[str, Any], content: bytes) -> None:
        super().__init__(body)
        self.content = content

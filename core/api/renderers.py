"""The API's JSON renderer: DRF's output, made by orjson where the two agree, and a body
already encoded (core.wire.EncodedJson, made by `encoded`) sent as it is.

orjson writes the same JSON values as DRF's encoder: compact, UTF-8, each type orjson has
no rule for (Decimal, lazy text, bytes...) and every date and time taken to DRF's encoder as
DRF would. Whatever orjson refuses (an integer beyond 64 bits, a key that is not a string,
a lone surrogate) is left to DRF's own render, so it answers as before. The differences: the
spelling of some floats (`1e-7`, not `1e-07`), and a NaN or an infinity would be written as
null where DRF refuses it (the API's numbers come from finite Decimals through
core.wire.json_number, which refuses the others). U+2028 and U+2029 are escaped, as DRF
does, so a body stays a strict JavaScript subset.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

from core.wire import EncodedJson

_DRF_DEFAULT = JSONEncoder().default
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_LINE_SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


class JsonRenderer(JSONRenderer):
    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Mapping[str, Any] | None = None
    ) -> bytes:
        # DRF's get_indent takes a None media type (its stubs say str)
        if data is None or self.get_indent(accepted_media_type, renderer_context or {}) is not None:  # type: ignore[arg-type]
            return super().render(data, accepted_media_type, renderer_context)
        if type(data) is EncodedJson:
            return data.content
        if not self.ensure_ascii and self.compact and self.strict:
            content = _orjson(data)
            if content is not None:
                return content
        return super().render(data, accepted_media_type, renderer_context)


def _orjson(data: Any) -> bytes | None:
    try:
        content = orjson.dumps(data, default=_DRF_DEFAULT, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return None
    for raw, escaped in _LINE_SEPARATORS:
        if raw in content:
            content = content.replace(raw, escaped)
    return content


def encoded(body: dict[str, Any]) -> EncodedJson:
    """`body` with its encoding by the renderer, made once (a draft's answer is both the
    response and the record kept under its Idempotency-Key)."""
    return EncodedJson(body, JsonRenderer().render(body))

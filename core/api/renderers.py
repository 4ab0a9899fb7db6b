"""The API's JSON renderer: DRF's, except that a body already encoded the same way
(core.wire.EncodedJson, made by `encoded`) is sent as it is, not encoded again."""

from __future__ import annotations

from rest_framework.renderers import JSONRenderer

from core.wire import EncodedJson


class JsonRenderer(JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if type(data) is EncodedJson and self.get_indent(accepted_media_type, renderer_context or {}) is None:
            return data.content
        return super().render(data, accepted_media_type, renderer_context)


def encoded(body: dict) -> EncodedJson:
    """`body` with its encoding by the renderer, made once (a draft's answer is both the
    response and the record kept under its Idempotency-Key)."""
    return EncodedJson(body, JSONRenderer().render(body))

"""Text people type: no control characters, wherever it comes in.

What a user types ends up in payment URIs, PDFs, emails, the pay page and terminals, so a
control character (C0, DEL, C1), a bidirectional control (embeddings, overrides, isolates and
the marks LRM, RLM and ALM), an invisible zero-width character (ZWSP, ZWNJ, ZWJ, WORD JOINER,
BOM) or a line/paragraph separator is refused with a field error rather than stored or
stripped: text shown to a payer must read as it looks, and two names that look the same must
be the same text (docs/decisions.md, "Invisible characters"). Multiline text (a suggestion) may hold tab and
newline. One check serves every surface: strict REST serializers (and so MCP tools) run it on
every string field (`core.api.serializers.StrictSerializer`), forms through `PlainTextForm`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy

CODE = "control_characters"
MESSAGE = "Must not contain control, invisible (zero-width) or text-direction characters."
# The same, in the reader's language, on a form's field (the API keeps MESSAGE in English).
FORM_MESSAGE = gettext_lazy("Must not contain control, invisible (zero-width) or text-direction characters.")
# Bidi controls (U+202A-U+202E, U+2066-U+2069, LRM/RLM U+200E/U+200F, ALM U+061C), zero-width
# characters (U+200B-U+200D, WORD JOINER U+2060, BOM U+FEFF), line and paragraph separators.
_BIDI_AND_SEPARATORS = "\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\u2028\u2029"
_CONTROLS = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI_AND_SEPARATORS}]")
_CONTROLS_MULTILINE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_AND_SEPARATORS}]")


def has_control_characters(text: str, *, multiline: bool = False) -> bool:
    """Whether text holds a character a user's text may not (tab and newline allowed when multiline;
    a browser's CRLF line ends count as newlines)."""
    if multiline:
        return _CONTROLS_MULTILINE.search(text.replace("\r\n", "\n")) is not None
    return _CONTROLS.search(text) is not None


def shown(text: str | None) -> str | None:
    """text with each control character replaced by U+FFFD, for text stored before it was refused."""
    return _CONTROLS.sub("\ufffd", text) if text else text


class PlainTextForm(forms.Form):
    """A form whose every text field refuses control characters (a Textarea may hold newlines),
    checked before the field strips whitespace, so none is dropped unnoticed."""

    def full_clean(self) -> None:
        # Here rather than in __init__: a form may add fields after its own __init__ ran.
        for field in self.fields.values():
            if isinstance(field, forms.CharField) and not getattr(field, "refuses_controls", False):
                field.to_python = _refusing_controls(  # type: ignore[method-assign,assignment]  # this instance's own
                    field.to_python, multiline=isinstance(field.widget, forms.Textarea)
                )
                field.refuses_controls = True  # type: ignore[attr-defined]  # our mark on the field instance
        super().full_clean()


def _refusing_controls(to_python: Callable[[Any], str | None], *, multiline: bool) -> Callable[[Any], str | None]:
    def checked(value: Any) -> str | None:
        if isinstance(value, str) and has_control_characters(value, multiline=multiline):
            raise ValidationError(FORM_MESSAGE, code=CODE)
        return to_python(value)

    return checked

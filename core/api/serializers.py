"""Base serializers and strict fields for request bodies."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core import text
from core.api.parsers import LongInteger

_COMPOSITE_FIELDS = (serializers.BaseSerializer, serializers.ListField, serializers.DictField)


def _shallow_copy(field: serializers.Field[Any, Any, Any, Any]) -> serializers.Field[Any, Any, Any, Any]:
    """copy.copy without its pickle protocol round (__reduce_ex__): a third of its cost."""
    clone = object.__new__(type(field))
    clone.__dict__.update(field.__dict__)
    return clone


class StrictSerializer(serializers.Serializer[Any]):
    """Rejects unknown properties, as the spec's schemas say (additionalProperties false)."""

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # DRF deep-copies every declared field for each serializer, which runs each field's
        # __init__ again: two thirds of validating a draft body. A plain field is stateless
        # once built (validators and choices are only read), so a shallow copy serves; bind()
        # then gives the copy its own name and parent. Fields holding fields are deep-copied.
        return {
            name: copy.deepcopy(field) if isinstance(field, _COMPOSITE_FIELDS) else _shallow_copy(field)
            for name, field in _with_allowed_values(self._declared_fields).items()
        }

    # DRF walks `self.fields` (a BindingDict) through the Mapping mixin's views, a generator
    # step and a __getitem__ call per field, three times per validation: its plain dict of
    # bound fields (`.fields`) gives the same fields in the same order.
    @property
    def _writable_fields(self) -> list[serializers.Field[Any, Any, Any, Any]]:
        return [field for field in self.fields.fields.values() if not field.read_only]

    def _read_only_defaults(self) -> dict[str, Any]:
        if not any(field.read_only for field in self.fields.fields.values()):
            return {}
        return super()._read_only_defaults()

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            fields = self.fields.fields
            unknown = sorted(data.keys() - fields.keys())
            if unknown:
                raise serializers.ValidationError(
                    {name: [serializers.ErrorDetail("Unknown field.", code="unknown_field")] for name in unknown}
                )
            refused = _control_characters(fields, data)
            if refused:
                raise serializers.ValidationError(refused)
        return super().to_internal_value(data)


def _control_characters(
    fields: Mapping[str, serializers.Field[Any, Any, Any, Any]], data: dict[str, Any]
) -> dict[str, list[serializers.ErrorDetail]]:
    """Every text field refuses control characters (core.text), before any field trims it;
    a PlainTextField checks itself (multiline or not)."""
    return {
        name: [serializers.ErrorDetail(text.MESSAGE, code=text.CODE)]
        for name, field in fields.items()
        if isinstance(field, serializers.CharField)
        and not isinstance(field, PlainTextField)
        and isinstance(value := data.get(name), str)
        and text.has_control_characters(value)
    }


def _with_allowed_values(
    fields: dict[str, serializers.Field[Any, Any, Any, Any]],
) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
    """An invalid_choice error lists the values the field takes (once per declared field)."""
    for field in fields.values():
        if isinstance(field, serializers.ChoiceField) and not getattr(field, "_lists_choices", False):
            allowed = ", ".join(str(choice) for choice in field.choices).replace("{", "{{").replace("}", "}}")
            field.error_messages = {
                **field.error_messages,
                "invalid_choice": f'"{{input}}" is not a valid choice. Allowed values: {allowed}.',
            }
            field._lists_choices = True  # type: ignore[attr-defined]  # our mark on the field instance
    return fields


# --- Strict fields: the JSON type the spec names, nothing coerced -------------------------------


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only: no strings ("1234", " 1234 "), no 1234.0 or 1.2e3, no booleans."""

    default_error_messages = {"invalid": "Must be a JSON integer (no quotes, fraction or exponent)."}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, LongInteger):  # more digits than any field's range
            self.fail("max_value" if data > 0 else "min_value", max_value=self.max_value, min_value=self.min_value)
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictDecimalField(serializers.DecimalField):
    """A JSON number only (parsed as Decimal, never a float): strings and booleans are refused."""

    default_error_messages = {"invalid": "Must be a JSON number (no quotes)."}

    def to_internal_value(self, data: Any) -> Decimal:
        if isinstance(data, bool) or not isinstance(data, int | Decimal):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false only (DRF also takes "yes", "on", 1 and friends)."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictChoiceField(serializers.ChoiceField):
    """A JSON string that is exactly one of the choices (DRF also matches str(1) for 1 and the like)."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


@extend_schema_field({"type": "string", "pattern": "^[A-Z]{3}$", "minLength": 3, "maxLength": 3})
class CurrencyCodeField(serializers.CharField):
    """An ISO 4217 code as the standard writes it: three upper-case ASCII letters ("SEK"). As every
    code and enum in a body, exactly as the schema lists it: "sek" is refused as "usdc" is."""

    default_error_messages = {"invalid_currency": "Must be a three-letter ISO 4217 currency code in upper case (SEK)."}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", 3)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or not (len(data) == 3 and data.isascii() and data.isupper() and data.isalpha()):
            self.fail("invalid_currency")
        return data


class PlainTextField(serializers.CharField):
    """A JSON string without control characters or bidirectional overrides (newline and tab allowed
    when multiline): text that ends up in payment URIs, PDFs and e-mails."""

    default_error_messages = {text.CODE: text.MESSAGE}

    def __init__(self, *, multiline: bool = False, **kwargs: Any) -> None:
        self.multiline = multiline
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        if text.has_control_characters(data, multiline=self.multiline):
            self.fail(text.CODE)
        return super().to_internal_value(data)

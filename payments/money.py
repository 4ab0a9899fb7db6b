"""One project-wide precision for Decimal money columns."""

from __future__ import annotations

from typing import Any

from django.db import models

MAX_DIGITS = 38
DECIMAL_PLACES = 18


def MoneyField(**kwargs: Any) -> models.DecimalField[Any, Any]:  # noqa: N802 - reads like a field class
    return models.DecimalField(max_digits=MAX_DIGITS, decimal_places=DECIMAL_PLACES, **kwargs)

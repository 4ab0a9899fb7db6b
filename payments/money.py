"""One project-wide precision for Decimal money columns."""

from django.db import models

MAX_DIGITS = 38
DECIMAL_PLACES = 18


def MoneyField(**kwargs) -> models.DecimalField:  # noqa: N802 - reads like a field class
    return models.DecimalField(max_digits=MAX_DIGITS, decimal_places=DECIMAL_PLACES, **kwargs)

from __future__ import annotations

from celery import shared_task

from payments.rates import refresh_rates


@shared_task(name="payments.rates_refresh", ignore_result=True)
def rates_refresh() -> dict[str, str]:
    """Beat entry ``payments-rates-refresh``: fetch both rate tables (safe to run twice)."""
    return refresh_rates()

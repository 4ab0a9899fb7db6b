"""Beat tick for recurring templates: claims due runs from PostgreSQL and makes them."""

from __future__ import annotations

from celery import shared_task

from recurring import services


@shared_task(name="recurring.run_due", ignore_result=True)
def run_due() -> int:
    return services.recurring_run_due()

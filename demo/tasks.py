"""Beat tick of the demo's payment simulator (scheduled only with DEMO_SIMULATE_PAYMENTS)."""

from __future__ import annotations

from celery import shared_task

from demo import services


@shared_task(name="demo.simulate_payments", ignore_result=True)
def simulate_payments() -> int:
    return services.demo_payments_simulate()

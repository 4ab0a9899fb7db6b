from __future__ import annotations

from celery import shared_task

from paylinks import services


@shared_task(name="paylinks.expire_due", ignore_result=True)
def expire_due() -> int:
    """Open payment requests past their expiry -> Expired. Bounded batch; safe to run twice."""
    return services.payment_requests_expire_due()

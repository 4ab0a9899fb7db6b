from __future__ import annotations

from celery import shared_task

from refunds import services


@shared_task(name="refunds.expire_due", ignore_result=True)
def expire_due() -> int:
    """Claimable refunds past their expiry -> Expired. Bounded batch; safe to run twice."""
    return services.refunds_expire_due()

from __future__ import annotations

from celery import shared_task

from attention.digest import digests_send


@shared_task(name="attention.digest", ignore_result=True)
def digest() -> int:
    """Today's digest of each account with something waiting, once a day (attention.digest)."""
    return digests_send()

"""Housekeeping for human accounts."""

from __future__ import annotations

from celery import shared_task

from accounts.codes import email_codes_purge


@shared_task(name="accounts.purge_email_codes", ignore_result=True)
def purge_email_codes() -> int:
    return email_codes_purge()

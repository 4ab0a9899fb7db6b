"""A dependency that does not answer (the database, the cache, the broker) is a 503 with
Retry-After, never a 500: the request may succeed once it is back.

`outage_of` names the dependency an exception says is down; a request that failed on one is
answered by the exception handler (DRF views) or by ApiProblemMiddleware (anything else: a
middleware's own database or cache call), which learns of it through `got_request_exception`.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from django.conf import settings
from django.core.signals import got_request_exception
from django.db import InterfaceError
from django.db import OperationalError as DatabaseError
from django.dispatch import receiver
from django.http import HttpRequest
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from core.problems import ServiceUnavailable

logger = logging.getLogger(__name__)

DETAILS = {
    "database": "The database is not answering; try again shortly.",
    "cache": "The cache is not answering; try again shortly.",
    "broker": "The task broker is not answering; try again shortly.",
}


def outage_of(exc: BaseException | None) -> str | None:
    """ "database", "cache" or "broker" when `exc` says that dependency is unreachable, else None."""
    if isinstance(exc, (DatabaseError, InterfaceError)):
        return "database"
    if isinstance(exc, (RedisConnectionError, RedisTimeoutError)):
        # The broker may be Redis too; the cache is the Redis a request talks to.
        return "cache"
    if isinstance(exc, BrokerError):
        return "broker"
    return None


def outage_problem(exc: BaseException | None) -> ServiceUnavailable | None:
    kind = outage_of(exc)
    if kind is None:
        return None
    logger.error("dependency unavailable: %s (%s: %s)", kind, type(exc).__name__, exc)
    return ServiceUnavailable(DETAILS[kind], code=f"{kind}_unavailable")


def retry_after_seconds() -> str:
    return str(settings.OUTAGE_RETRY_AFTER_SECONDS)


@receiver(got_request_exception, dispatch_uid="core.outages.note_outage")
def _note_outage(sender: object, request: HttpRequest | None = None, **kwargs: Any) -> None:
    """Django turns an exception raised in middleware into a 500 before the outer middleware sees
    it; the request keeps which dependency it was, for ApiProblemMiddleware to answer 503."""
    if request is not None:
        request.outage = outage_problem(sys.exc_info()[1])  # type: ignore[attr-defined]  # ours, on the request

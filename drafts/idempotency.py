"""Idempotency-Key handling for draft creation (decisions.md, Idempotency).

The key is claimed in its own committed transaction before any work, so concurrent
requests with the same key see the claim: exactly one of them creates the draft, the
others get 409 while it runs and the stored response after. The unique constraint on
(user, key) is what makes that true under concurrency.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from config.problems import Conflict, Problem, Unprocessable
from drafts.models import IdempotencyKey

MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class Outcome:
    status: int
    body: Any
    replayed: bool = False


def request_fingerprint(body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def validate_key(key: str, *, field: str = "Idempotency-Key") -> str:
    if not (1 <= len(key) <= MAX_KEY_LENGTH) or not key.isprintable():
        raise Problem(
            "Idempotency-Key must be 1-255 printable characters.", code="invalid_idempotency_key", field=field
        )
    return key


def _claim(*, user, key: str, fingerprint: str) -> IdempotencyKey | Outcome:
    """Claim the key with one INSERT, or return the outcome it already stands for."""
    try:
        with transaction.atomic():
            return IdempotencyKey.objects.create(user=user, key=key, request_hash=fingerprint)
    except IntegrityError:
        existing = IdempotencyKey.objects.filter(user=user, key=key).first()
    cutoff = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)
    if existing is None or existing.created_at < cutoff:
        # Gone, or older than the retention: it no longer stands for anything. Claim anew.
        IdempotencyKey.objects.filter(user=user, key=key, created_at__lt=cutoff).delete()
        return _claim(user=user, key=key, fingerprint=fingerprint)
    if existing.request_hash != fingerprint:
        raise Unprocessable(
            "This Idempotency-Key was used with a different request body.", code="idempotency_key_reused"
        )
    if existing.state == IdempotencyKey.State.IN_PROGRESS:
        raise Conflict("A request with this Idempotency-Key is still in progress.", code="idempotency_in_progress")
    return Outcome(status=existing.response_status, body=existing.response_body, replayed=True)


Record = Callable[[Outcome], None]


def _record_nothing(outcome: Outcome) -> None:
    pass


def run_idempotently(*, user, key: str | None, body: Any, work: Callable[[Record], Outcome]) -> Outcome:
    """Run `work` once per (user, key, body); replay its stored outcome afterwards.

    `work` calls the `record` it is given with its successful outcome inside the
    transaction that writes its result, so the stored response commits with it.
    Client errors (4xx) are stored too; a server-side failure (5xx or a crash)
    releases the key so the client can retry.
    """
    if key is None:
        return work(_record_nothing)
    claimed = _claim(user=user, key=key, fingerprint=request_fingerprint(body))
    if isinstance(claimed, Outcome):
        return claimed

    def record(outcome: Outcome) -> None:
        IdempotencyKey.objects.filter(pk=claimed.pk).update(
            state=IdempotencyKey.State.DONE, response_status=outcome.status, response_body=outcome.body
        )

    try:
        return work(record)
    except Problem as problem:
        if problem.status_code >= 500:
            IdempotencyKey.objects.filter(pk=claimed.pk).delete()
            raise
        outcome = Outcome(status=problem.status_code, body=problem.document())
        record(outcome)
        return outcome
    except BaseException:
        IdempotencyKey.objects.filter(pk=claimed.pk).delete()
        raise


def purge_expired(*, now=None) -> int:
    cutoff = (now or timezone.now()) - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted

"""Idempotency-Key handling for draft and payment-request creation (decisions.md, Idempotency).

One transaction per creation: the work writes its result and, in the same transaction, the
key with the answer (`INSERT ... ON CONFLICT DO NOTHING`). The unique constraint on (user,
key) decides who was first: a concurrent request with the same key waits on that INSERT until
the first commits, finds the key taken, rolls its own work back and replays the first answer;
a later retry does the same. So the answer, the draft and its event commit together, and
exactly one draft exists per key whatever the timing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from config.problems import Conflict, Problem, Unprocessable
from config.rows import RowInserter
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


class _KeyTaken(Exception):
    """The key already holds an answer: roll back the work that made another one."""


_KEY_INSERT = RowInserter(IdempotencyKey, on_conflict=["user", "key"])


def _store(*, user, key: str, fingerprint: str, outcome: Outcome) -> bool:
    """Store the answer under the key, in the caller's transaction. False if the key already
    holds one (a key older than the retention stands for nothing and is replaced)."""
    row = IdempotencyKey(
        user=user,
        key=key,
        request_hash=fingerprint,
        state=IdempotencyKey.State.DONE,
        response_status=outcome.status,
        response_body=outcome.body,
    )
    if _KEY_INSERT.insert(row):
        return True
    cutoff = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)
    if IdempotencyKey.objects.filter(user=user, key=key, created_at__lt=cutoff).delete()[0]:
        return _KEY_INSERT.insert(row)
    return False


def _replay(*, user, key: str, fingerprint: str) -> Outcome:
    existing = IdempotencyKey.objects.filter(user=user, key=key).first()
    if existing is None:  # released between our INSERT and this read: an earlier failure; run again
        raise Conflict("A request with this Idempotency-Key is still in progress.", code="idempotency_in_progress")
    if existing.request_hash != fingerprint:
        raise Unprocessable(
            "This Idempotency-Key was used with a different request body.", code="idempotency_key_reused"
        )
    if existing.state == IdempotencyKey.State.IN_PROGRESS:  # a claim written by an earlier release
        raise Conflict("A request with this Idempotency-Key is still in progress.", code="idempotency_in_progress")
    return Outcome(status=existing.response_status, body=existing.response_body, replayed=True)


Record = Callable[[Outcome], None]


def _record_nothing(outcome: Outcome) -> None:
    pass


def run_idempotently(*, user, key: str | None, body: Any, work: Callable[[Record], Outcome]) -> Outcome:
    """Run `work` once per (user, key, body); replay its stored outcome afterwards.

    `work` calls the `record` it is given with its successful outcome inside the
    transaction that writes its result, so the stored response commits with it (and a key
    already taken rolls that transaction back). Client errors (4xx) are stored too; a
    server-side failure (5xx or a crash) stores nothing, so the client can retry.
    """
    if key is None:
        return work(_record_nothing)
    fingerprint = request_fingerprint(body)

    def record(outcome: Outcome) -> None:
        if not _store(user=user, key=key, fingerprint=fingerprint, outcome=outcome):
            raise _KeyTaken

    try:
        return work(record)
    except _KeyTaken:
        return _replay(user=user, key=key, fingerprint=fingerprint)
    except Problem as problem:
        if problem.status_code >= 500:
            raise
        outcome = Outcome(status=problem.status_code, body=problem.document())
        with transaction.atomic():
            stored = _store(user=user, key=key, fingerprint=fingerprint, outcome=outcome)
        return outcome if stored else _replay(user=user, key=key, fingerprint=fingerprint)


def purge_expired(*, now=None) -> int:
    cutoff = (now or timezone.now()) - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted

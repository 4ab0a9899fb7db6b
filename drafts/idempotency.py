"""Idempotency-Key handling for draft and payment-request creation (decisions.md, Idempotency).

The key is written with the answer, in the same statement or transaction as the work's
result (`INSERT ... ON CONFLICT DO NOTHING`). A draft's creation writes it first in the
draft's own statement (core.sql.rows.insert_then_fetch): a key already taken writes nothing,
neither the draft nor its event. The unique constraint on (user, key) decides who was first:
a concurrent request with the same key waits on that INSERT until the first commits, finds the
key taken, drops its own work and replays the first answer; a later retry does the same. So
the answer, the draft and its event commit together, and exactly one draft exists per key
whatever the timing. A key older than the retention stands for nothing: it is deleted and the
request runs anew.
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

from accounts.modes import livemode_of
from core.problems import Conflict, Problem, Unprocessable
from core.sql.rows import RowInserter
from core.sql.state import unwritten
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


@dataclass(frozen=True)
class KeyTaken:
    """A write's refused result: the key already held an answer, so nothing was written (the
    first answer is replayed)."""


KEY_TAKEN = KeyTaken()


_KEY_INSERT = RowInserter(IdempotencyKey, on_conflict=["user", "key"])


class Record:
    """Stores a creation's answer under its Idempotency-Key, with the creation's result.

    Either in the creation's own statement: `rows(outcome)` gives the row to write first
    (drafts.creation.draft_create's `along`), and `result()`, once it ran, is the answer
    stored, or KEY_TAKEN if the key already held one (then nothing was written). Or on its
    own, in the creation's transaction: `record(outcome)`, after which `stored` is the answer.
    Without a key nothing is written and the answer is still kept."""

    def __init__(self, *, user, key: str | None, fingerprint: str = "") -> None:
        self.user, self.key, self.fingerprint = user, key, fingerprint
        self._row: IdempotencyKey | None = None
        self.stored: Outcome | None = None

    def _row_of(self, outcome: Outcome) -> IdempotencyKey:
        return IdempotencyKey(
            user=self.user,
            key=self.key,
            request_hash=self.fingerprint,
            state=IdempotencyKey.State.DONE,
            response_status=outcome.status,
            response_body=outcome.body,
        )

    def rows(self, outcome: Outcome) -> list[tuple[RowInserter, IdempotencyKey]]:
        self.stored = outcome
        if self.key is None:
            return []
        self._row = self._row_of(outcome)
        return [(_KEY_INSERT, self._row)]

    def result(self) -> Outcome | KeyTaken:
        if self._row is not None and unwritten(self._row):  # refused: the key is taken
            return KEY_TAKEN
        assert self.stored is not None, "rows() gives the answer before the write"
        return self.stored

    def __call__(self, outcome: Outcome) -> None:
        """Store the answer in the caller's transaction; a taken key rolls that transaction back."""
        self.stored = outcome
        if self.key is not None and not _KEY_INSERT.insert(self._row_of(outcome)):
            raise _KeyTaken


def _replay(*, user, key: str, fingerprint: str) -> Outcome | None:
    """The stored answer of a taken key; None if the key was older than the retention (it is
    deleted, and the request runs anew)."""
    existing = IdempotencyKey.objects.filter(user=user, key=key).first()
    if existing is None:  # released between our INSERT and this read: an earlier failure; run again
        raise Conflict("A request with this Idempotency-Key is still in progress.", code="idempotency_in_progress")
    cutoff = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)
    if existing.created_at < cutoff:
        IdempotencyKey.objects.filter(pk=existing.pk, created_at__lt=cutoff).delete()
        return None
    if existing.request_hash != fingerprint:
        raise Unprocessable(
            "This Idempotency-Key was used with a different request body.", code="idempotency_key_reused"
        )
    if existing.state == IdempotencyKey.State.IN_PROGRESS:  # a claim written by an earlier release
        raise Conflict("A request with this Idempotency-Key is still in progress.", code="idempotency_in_progress")
    return Outcome(status=existing.response_status, body=existing.response_body, replayed=True)


def run_idempotently(*, user, key: str | None, body: Any, work: Callable[[Record], Outcome | KeyTaken]) -> Outcome:
    """Run `work` once per (user, key, body); replay its stored outcome afterwards.

    `work` stores its successful outcome with the `Record` it is given, with the result it
    writes (in its statement or transaction), so the stored response commits with it (and a
    key already taken writes nothing). Client errors (4xx) are stored too; a server-side
    failure (5xx or a crash) stores nothing, so the client can retry.
    """
    if key is None:
        outcome = work(Record(user=user, key=None))
        assert isinstance(outcome, Outcome), "without a key nothing can be refused"
        return outcome
    if not livemode_of(user):  # a test key's records are its own: never a live answer replayed to it
        key = "test:" + hashlib.sha256(key.encode()).hexdigest()
    fingerprint = request_fingerprint(body)
    for _ in range(3):  # again only after deleting a stale key (another request may take it)
        try:
            result = _run_once(user=user, key=key, fingerprint=fingerprint, work=work)
        except _KeyTaken:
            result = KEY_TAKEN
        if isinstance(result, KeyTaken):
            result = _replay(user=user, key=key, fingerprint=fingerprint)
        if result is not None:
            return result
    raise Conflict("A request with this Idempotency-Key is still in progress.", code="idempotency_in_progress")


def _run_once(*, user, key: str, fingerprint: str, work: Callable[[Record], Outcome | KeyTaken]) -> Outcome | KeyTaken:
    try:
        return work(Record(user=user, key=key, fingerprint=fingerprint))
    except Problem as problem:
        if problem.status_code >= 500:
            raise
        outcome = Outcome(status=problem.status_code, body=problem.document())
        with transaction.atomic():
            Record(user=user, key=key, fingerprint=fingerprint)(outcome)
        return outcome


def purge_expired(*, now=None) -> int:
    cutoff = (now or timezone.now()) - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted

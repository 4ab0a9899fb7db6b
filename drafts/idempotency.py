"""Idempotency-Key handling for creations: drafts, payment requests, refunds (decisions.md,
Idempotency).

The key is written with the answer, in the same statement or transaction as what the answer
describes (`INSERT ... ON CONFLICT DO NOTHING`; KeyClaim). A draft's creation writes it first
in the draft's own statement (core.sql.writes.rows_write): a key already taken writes
nothing, neither the draft nor its event. Other creations take the key first in their
transaction and store the answer at its end. The unique constraint on (user, key) decides who
was first: a concurrent request with the same key waits on that INSERT until the first
commits, finds the key taken, writes nothing and replays the first answer; a later retry does
the same. So the answer and what it describes commit together, and exactly one object exists
per key whatever the timing. A key older than the retention stands for nothing: it is deleted
and the request runs anew.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import User
from accounts.modes import livemode_of
from core.api.renderers import encoded
from core.encryption import decrypt, encrypt, is_token
from core.problems import Conflict, Problem, Unprocessable
from core.retention import BATCH, MAX_BATCHES, purge_in_batches
from core.sql.rows import RowInserter
from core.sql.values import unsaved
from core.wire import EncodedJson
from drafts.models import IdempotencyKey

MAX_KEY_LENGTH = 255

T = TypeVar("T")


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


@dataclass(frozen=True)
class KeyTaken:
    """A creation's refused result: its key already held an answer, so it wrote nothing (the
    first answer is replayed)."""


KEY_TAKEN = KeyTaken()

_KEY_INSERT = RowInserter(IdempotencyKey, on_conflict=["user", "key"])


@dataclass(eq=False)
class KeyClaim:
    """An Idempotency-Key, as the creation it guards writes it: with its answer, in the
    creation's own statement or transaction, so the two commit together or not at all.

    `answer` turns what the creation made into the response stored under the key (the REST
    body); the request answers with the very answer stored (`answer_for`), built once. Two
    ways to write it:
    - in the creation's statement: `row(created)` is the key's row, written first and with
      `ON CONFLICT DO NOTHING`, so a taken key stops the statement before anything else
      (drafts.creation: the draft, its event and the key in one statement);
    - in the creation's transaction: `take()` first, before the creation writes anything
      (False: the key already holds an answer; write nothing and return KEY_TAKEN), then
      `keep(created)` once it is made.
    """

    user: Any
    key: str
    fingerprint: str
    answer: Callable[[Any], Outcome]
    # The answer holds a secret shown once (a webhook's signing secret, an API key): it is kept
    # encrypted (core.encryption), as the secret itself is at rest.
    secret: bool = False
    # What `row` or `keep` last put under the key: (the creation, its answer).
    stored: tuple[Any, Outcome] | None = field(default=None, init=False, repr=False)

    def _row(self, outcome: Outcome | None) -> IdempotencyKey:
        return unsaved(
            IdempotencyKey,
            user=self.user,
            key=self.key,
            request_hash=self.fingerprint,
            state=IdempotencyKey.State.DONE if outcome is not None else IdempotencyKey.State.IN_PROGRESS,
            response_status=outcome.status if outcome is not None else None,
            response_body=self._text(outcome) if outcome is not None else None,
        )

    def _text(self, outcome: Outcome) -> str:
        text = outcome.body.content.decode()
        return encrypt(text) if self.secret else text

    def row(self, created: Any) -> tuple[RowInserter, IdempotencyKey]:
        """The key's row holding the answer for `created`, for the creation's own statement
        (after it ran, `core.sql.state.unwritten(row)` says the key was taken)."""
        return _KEY_INSERT, self._row(self._stored_answer(created))

    def take(self) -> bool:
        """Write the key, without its answer yet, in the creation's transaction before anything
        else; False if it already holds one. A request with the same key waits here until this
        transaction ends, then finds the key taken (or free, if this one rolled back)."""
        return _KEY_INSERT.insert(self._row(None))

    def keep(self, created: Any) -> None:
        """Store the answer for `created` under the key taken by `take()`, in the same transaction."""
        outcome = self._stored_answer(created)
        IdempotencyKey.objects.filter(user=self.user, key=self.key).update(
            state=IdempotencyKey.State.DONE,
            response_status=outcome.status,
            response_body=self._text(outcome),
        )

    def answer_for(self, created: Any) -> Outcome:
        """The answer for `created`: the one put under the key with it (`row` or `keep`), else
        built now."""
        if self.stored is not None and self.stored[0] is created:
            return self.stored[1]
        return self.answer(created)

    def _stored_answer(self, created: Any) -> Outcome:
        outcome = _encoded(self.answer(created))
        self.stored = (created, outcome)
        return outcome

    def store(self, outcome: Outcome) -> bool:
        """Store a refusal (a 4xx problem) under the key; False if the key already held an answer."""
        return _KEY_INSERT.insert(self._row(_encoded(outcome)))


def _encoded(outcome: Outcome) -> Outcome:
    """The outcome with its body encoded as the API sends it (once: a draft's answer comes
    encoded already), so that what is stored under the key is the text the client gets."""
    if isinstance(outcome.body, EncodedJson):
        return outcome
    return Outcome(status=outcome.status, body=encoded(outcome.body), replayed=outcome.replayed)


def _replay(*, user: User, key: str, fingerprint: str) -> Outcome | None:
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
    text, status = existing.response_body, existing.response_status
    assert text is not None and status is not None  # a done key holds its answer (written with the state)
    if is_token(text):  # an answer holding a secret (KeyClaim.secret)
        text = decrypt(text, where="an idempotent answer")
    body = EncodedJson(json.loads(text), text.encode())  # sent as it was the first time
    return Outcome(status=status, body=body, replayed=True)


def run_idempotently(
    *,
    user: User,
    key: str | None,
    body: Any,
    answer: Callable[[T], Outcome],
    work: Callable[[KeyClaim | None], T | KeyTaken],
    key_field: str = "Idempotency-Key",
    secret: bool = False,
) -> Outcome:
    """Run `work` once per (user, key, body); replay its stored answer afterwards. A malformed
    key is a 400 naming `key_field` (the header, or an MCP argument or batch item's field).

    `work(claim)` makes the thing (or raises a Problem) and writes `claim` with it (see
    KeyClaim), so the stored answer commits with what it describes; it returns what it made, or
    KEY_TAKEN when the key already held an answer and it wrote nothing. `answer` turns what it
    made into the response. Client errors (4xx) are stored too; a server-side failure (5xx or a
    crash) stores nothing, so the client can retry.
    """
    if key is not None:
        validate_key(key, field=key_field)
    if key is None:
        made = work(None)
        assert not isinstance(made, KeyTaken), "without a key nothing can be refused"
        return answer(made)
    if not livemode_of(user):  # a test key's records are its own: never a live answer replayed to it
        key = "test:" + hashlib.sha256(key.encode()).hexdigest()
    claim = KeyClaim(user=user, key=key, fingerprint=request_fingerprint(body), answer=answer, secret=secret)
    for _ in range(3):  # again only after deleting a stale key (another request may take it)
        ran: Outcome | KeyTaken
        try:
            made = work(claim)
        except Problem as problem:  # a refusal (4xx) is kept under the key like an answer
            if problem.status_code >= 500:
                raise
            refusal = _encoded(Outcome(status=problem.status_code, body=problem.document()))
            with transaction.atomic():
                stored = claim.store(refusal)
            ran = refusal if stored else KEY_TAKEN
        else:
            ran = made if isinstance(made, KeyTaken) else claim.answer_for(made)
        result = _replay(user=user, key=key, fingerprint=claim.fingerprint) if isinstance(ran, KeyTaken) else ran
        if result is not None:
            return result
    raise Conflict("A request with this Idempotency-Key is still in progress.", code="idempotency_in_progress")


def create_once(
    *,
    user: User,
    key: str | None,
    operation: str,
    body: Any,
    make: Callable[[], Any],
    status: int = 200,
    key_field: str = "Idempotency-Key",
    secret: bool = False,
) -> Outcome:
    """Any creation made idempotent by its Idempotency-Key (docs/idempotency.md): `make()`
    creates and returns the REST body; the key is taken first in the same transaction and
    holds that body when it commits, so a retry with the same key and body gets the same
    bytes, another body a 422. `operation` namespaces the body (keys are per account, shared
    by every creation)."""

    def work(claim: KeyClaim | None) -> Any:
        with transaction.atomic():
            if claim is not None and not claim.take():
                return KEY_TAKEN
            made = make()
            if claim is not None:
                claim.keep(made)
            return made

    return run_idempotently(
        user=user,
        key=key,
        body={operation: body},
        answer=lambda made: Outcome(status=status, body=made),
        work=work,
        key_field=key_field,
        secret=secret,
    )


def purge_expired(*, now: datetime | None = None, batch: int = BATCH, max_batches: int = MAX_BATCHES) -> int:
    """Retention: keys older than IDEMPOTENCY_KEY_TTL_HOURS go, a small batch at a time."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)

    def candidates() -> QuerySet[IdempotencyKey]:
        return IdempotencyKey.objects.filter(created_at__lt=cutoff)

    return purge_in_batches(candidates, batch=batch, max_batches=max_batches).deleted

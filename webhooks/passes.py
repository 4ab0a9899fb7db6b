"""A dispatcher pass: one run of `webhooks.dispatch_due` sends the due deliveries of every
endpoint at once, waiting on the network without holding a worker process per request.

The database stays on the task's own thread and is the source of truth; the requests wait on
an event loop of another thread (outbound.concurrent.ConcurrentSender). For up to
WEBHOOKS_PASS_SECONDS the pass, every POLL_SECONDS or as soon as an answer comes:

- claims due deliveries with the dispatcher (`services.deliveries_dispatch`: its repair pass
  for lost attempts, oldest due first with no endpoint's backlog filling it, every endpoint
  within its in-flight cap counted in the database, an object's later event held while an
  earlier one is owed), as many as it has free slots (WEBHOOKS_PASS_IN_FLIGHT) and one request
  at a time per endpoint (so one object's events stay in order without more ado), moves each
  attempt Claimed -> Sending (only one taker can) and sends it;
- records each answer as it comes (`attempts.attempt_record`), in the database, before
  anything else is sent for that delivery;
- after a success on an endpoint that is neither failing nor slow, goes on through that
  endpoint's due deliveries as its lane (webhooks/lanes.py: leased a batch at a time on
  PostgreSQL, each attempt started in one statement), up to WEBHOOKS_PER_ENDPOINT_CONCURRENCY
  requests in flight and never two of one object's events (the lease holds only an object's
  earliest owed event; the lane skips an object it has in flight), widening only while half
  the pass's slots are free (on SQLite, which has no lanes, its next delivery is claimed at
  once instead of at the next claim round);
- records the successes it finds answered together in one statement
  (`attempts.attempts_record_succeeded`), before their lanes go on.

A process killed mid-pass loses nothing: an attempt in flight stays Sending (the next pass's
repair marks it Interrupted and its delivery goes on by its schedule), a claimed or leased
delivery comes due again when its claim or lease ends.

Slow endpoints (the rule, per worker process, from what its passes saw): a request open for
WEBHOOKS_SLOW_SECONDS, or one that timed out, marks its endpoint slow for SLOW_MEMORY_SECONDS.
A slow endpoint gets one attempt in flight (as a failing one), no lane (each of its deliveries
is claimed anew, in turn with everyone else's), and together the slow endpoints take at most
SLOW_SHARE of a pass's slots, so the others always find room. An endpoint whose last attempt
timed out gets WEBHOOKS_SLOW_TIMEOUT_SECONDS (not WEBHOOKS_TIMEOUT_SECONDS) until it answers
in time again. A quick success clears both.

When the pass stops claiming with requests still in flight, it nudges the next pass first
(another worker process takes up claiming), and while it waits for its last slow answers
(each bounded by its time-out) it still claims and sends the other endpoints' deliveries.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from dataclasses import dataclass, field
from uuid import UUID

from django.conf import settings
from django.db import connection

import outbound
from core.sql.backend import backend
from outbound.concurrent import ConcurrentSender
from webhooks import attempts, lanes, services
from webhooks.models import DeliveryAttempt, Event, Webhook

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.2
# A pass with nothing to do waits this long (claiming every POLL_SECONDS) before it ends, so
# the next change's delivery is claimed by a running pass rather than a new task.
LINGER_SECONDS = 1.0
SLOW_MEMORY_SECONDS = 300.0
SLOW_SHARE = 0.75


@dataclass
class _Seen:
    slow_until: float = 0.0
    timed_out: bool = False


# What this worker process's passes saw of each endpoint lately (the slow-endpoint rule).
_seen: dict[UUID, _Seen] = {}


def endpoint_slow(webhook_id: UUID, *, now: float | None = None) -> bool:
    seen = _seen.get(webhook_id)
    return seen is not None and seen.slow_until > (time.monotonic() if now is None else now)


def endpoint_timeout(webhook_id: UUID) -> float:
    """The time-out of an endpoint's next attempt: shorter after a time-out."""
    seen = _seen.get(webhook_id)
    if seen is not None and seen.timed_out:
        return float(min(settings.WEBHOOKS_SLOW_TIMEOUT_SECONDS, settings.WEBHOOKS_TIMEOUT_SECONDS))
    return float(settings.WEBHOOKS_TIMEOUT_SECONDS)


def endpoint_slow_mark(webhook_id: UUID, *, timed_out: bool = False) -> None:
    seen = _seen.setdefault(webhook_id, _Seen())
    seen.slow_until = time.monotonic() + SLOW_MEMORY_SECONDS
    seen.timed_out = timed_out


def endpoint_learn(webhook_id: UUID, outcome: outbound.Response) -> None:
    """Remember how an endpoint answered (the rule in the module's docstring)."""
    slow = outcome.timed_out or outcome.duration_ms >= settings.WEBHOOKS_SLOW_SECONDS * 1000
    if not slow:
        if outcome.ok:
            _seen.pop(webhook_id, None)
        return
    endpoint_slow_mark(webhook_id, timed_out=outcome.timed_out)


@dataclass
class _Lane:
    """An endpoint's deliveries leased to this pass, up to WEBHOOKS_PER_ENDPOINT_CONCURRENCY
    in flight at once, never two of one object's events."""

    webhook_id: UUID
    started: float
    made: int = 0
    batch: list[lanes.Leased] = field(default_factory=list)
    ends: float = 0.0  # when the batch's lease runs out (time.monotonic())
    flying: set[str] = field(default_factory=set)  # its requests in flight (_Flight.key)
    closed: bool = False  # no further attempt starts (a failure, a slow answer, its limits)

    def close(self) -> None:
        self.closed = True
        lanes.leased_release(self.batch)
        self.batch = []


@dataclass
class _Flight:
    attempt: DeliveryAttempt
    webhook_id: UUID
    lane: _Lane | None
    key: str  # its event's object (its own attempt's id for an event of no object)
    sent: float = field(default_factory=time.monotonic)


@dataclass
class PassReport:
    attempts: int = 0
    most_in_flight: int = 0


class _Pass:
    def __init__(self) -> None:
        self.sender: ConcurrentSender | None = None
        self.flights: dict[concurrent.futures.Future[outbound.Response], _Flight] = {}
        self.report = PassReport()
        self.leases = backend(connection).leased_batches
        self.recovered = False
        # Without leased batches (SQLite) an endpoint's next delivery is claimed as soon as its
        # last one succeeded, not at the next POLL_SECONDS: one at a time, at the pace it answers.
        self.claim_now = False

    def launch(self, attempt: DeliveryAttempt, webhook: Webhook, event: Event, lane: _Lane | None) -> str:
        """Send an attempt; returns its flight's key (its event's object)."""
        if self.sender is None:
            self.sender = ConcurrentSender(ca_bundle=settings.OUTBOUND_CA_BUNDLE)
        body, headers = attempts.attempt_request(attempt=attempt, webhook=webhook, event=event)
        future = self.sender.post(
            webhook.url,
            body=body,
            headers=headers,
            timeout=endpoint_timeout(webhook.id),
            max_bytes=settings.WEBHOOKS_RESPONSE_MAX_BYTES,
        )
        key = str(event.object_id) if event.object_id is not None else f"attempt:{attempt.id}"
        self.flights[future] = _Flight(attempt, webhook.id, lane, key)
        self.report.attempts += 1
        self.report.most_in_flight = max(self.report.most_in_flight, len(self.flights))
        return key

    def claim(self, free: int, *, quick_only: bool = False) -> int:
        """Claim up to `free` due attempts and send them (only of endpoints not slow with
        `quick_only`); returns how many were claimed."""
        now = time.monotonic()
        slow = {webhook_id for webhook_id in _seen if endpoint_slow(webhook_id, now=now)}
        slow_flying = sum(1 for flight in self.flights.values() if flight.webhook_id in slow)
        full = slow_flying >= int(settings.WEBHOOKS_PASS_IN_FLIGHT * SLOW_SHARE)
        skip = {flight.webhook_id for flight in self.flights.values()}  # one request per endpoint at a time
        if quick_only or full:
            skip |= slow
        claimed = services.deliveries_dispatch(
            limit=free,
            enqueue=False,
            slow=slow,
            skip=skip,
            one_each=True,
            recover=not self.recovered,
            healthy_cap=settings.WEBHOOKS_PER_ENDPOINT_CONCURRENCY + 1,
        )
        self.recovered = True
        for attempt_id in claimed:
            taken = attempts.attempt_take(attempt_id=attempt_id)
            if isinstance(taken, tuple):
                attempt, webhook, event = taken
                self.launch(attempt, webhook, event, None)
        return len(claimed)

    def outcome(self, future: concurrent.futures.Future[outbound.Response], flight: _Flight) -> outbound.Response:
        try:
            return future.result()
        except outbound.UrlNotAllowed as exc:
            return attempts.outcome_refused(exc)
        except Exception as exc:  # the sender itself failed: still one failed attempt, recorded
            logger.exception("webhook attempt %s: the sender failed", flight.attempt.id)
            return outbound.Response(None, 0, f"Request error: {exc.__class__.__name__}")

    def settle(self, future: concurrent.futures.Future[outbound.Response]) -> None:
        flight = self.flights.pop(future)
        outcome = self.outcome(future, flight)
        attempts.attempt_record(attempt=flight.attempt, outcome=outcome)
        self.settled(flight, outcome)

    def settle_successes(self, done: set[concurrent.futures.Future[outbound.Response]]) -> None:
        """Record every success among `done` in one statement (and take them out of `done`),
        then go on with their lanes; failures are left to `settle`, one at a time."""
        if not self.leases:
            return
        settled = []
        for future in list(done):
            if future.exception() is None and future.result().ok:
                done.discard(future)
                settled.append((self.flights.pop(future), future.result()))
        if not settled:
            return
        attempts.attempts_record_succeeded([(flight.attempt, outcome) for flight, outcome in settled])
        for flight, outcome in settled:
            self.settled(flight, outcome)

    def settled(self, flight: _Flight, outcome: outbound.Response) -> None:
        """What follows a recorded answer: the endpoint's memory, and its lane goes on or ends."""
        endpoint_learn(flight.webhook_id, outcome)
        lane = flight.lane
        if lane is not None:
            lane.flying.discard(flight.key)
        slow = endpoint_slow(flight.webhook_id)
        if not (outcome.ok and self.leases) or slow:
            if lane is not None:
                lane.close()
            if outcome.ok and not slow:  # no lanes here (SQLite): the endpoint's next at once
                self.claim_now = True
            return
        if lane is None:
            lane = _Lane(flight.webhook_id, started=time.monotonic())
        self.lane_fill(lane)

    def lane_fill(self, lane: _Lane) -> None:
        """Start the lane's next deliveries (leasing a batch when it has none) until it has
        WEBHOOKS_PER_ENDPOINT_CONCURRENCY in flight, or end it. A delivery whose object has a
        request in flight waits in the batch (the lease holds only an object's earliest owed
        event, so this is a second guard of per-object order). Beyond its first request, a lane
        takes slots only while half the pass's are free, so claims for other endpoints find room."""
        width = settings.WEBHOOKS_PER_ENDPOINT_CONCURRENCY
        while not lane.closed and len(lane.flying) < width:
            if lane.flying and len(self.flights) >= settings.WEBHOOKS_PASS_IN_FLIGHT // 2:
                return  # a lane widens only while half the pass's slots are free: room for the others
            spent = time.monotonic() - lane.started
            if lane.made >= lanes.LANE_MAX_ATTEMPTS or spent >= lanes.LANE_MAX_SECONDS:
                lane.close()
                return
            if not lane.batch:
                limit = min(max(lanes.LANE_BATCH, 2 * width), lanes.LANE_MAX_ATTEMPTS - lane.made)
                lane.batch = lanes.deliveries_lease(webhook_id=lane.webhook_id, limit=limit)
                lane.ends = time.monotonic() + lanes.lease().total_seconds()
                if not lane.batch:
                    if not lane.flying:
                        lane.closed = True
                    return
            if time.monotonic() >= lane.ends:  # no attempt starts on a lapsed lease
                lane.close()
                return
            index = next(
                (n for n, leased in enumerate(lane.batch) if str(leased.event.object_id) not in lane.flying),
                None,
            )
            if index is None:
                return  # each leased delivery's object has a request in flight: its answer comes first
            leased = lane.batch.pop(index)
            started = lanes.leased_start(leased)
            if started is None:  # the lease is gone or the endpoint started failing
                lane.close()
                return
            attempt, webhook = started
            lane.made += 1
            lane.flying.add(self.launch(attempt, webhook, leased.event, lane))

    def slow_flying(self) -> bool:
        """Whether a request of a slow endpoint is in flight; a request open for
        WEBHOOKS_SLOW_SECONDS marks its endpoint slow already, before its answer comes."""
        now = time.monotonic()
        found = False
        for flight in self.flights.values():
            if now - flight.sent >= settings.WEBHOOKS_SLOW_SECONDS and not endpoint_slow(flight.webhook_id, now=now):
                endpoint_slow_mark(flight.webhook_id)
            found = found or endpoint_slow(flight.webhook_id, now=now)
        return found

    def close(self) -> None:
        if self.sender is not None:
            self.sender.close()


def pass_run(*, seconds: float | None = None) -> PassReport:
    """Send what is due, claiming for `seconds` (WEBHOOKS_PASS_SECONDS), then wait for the
    answers still in flight: while a slow endpoint's request is among them (for one time-out
    at most), the pass goes on claiming for the endpoints that are not slow (their answers come
    long before), so a pass waiting for its last slow answers holds nobody up. Answers are
    recorded POLL_SECONDS at a time between claims, so a hundred slow answers coming together
    do not hold up the next claim. Returns how many attempts were made."""
    claim_until = time.monotonic() + (settings.WEBHOOKS_PASS_SECONDS if seconds is None else seconds)
    quick_until = claim_until + settings.WEBHOOKS_TIMEOUT_SECONDS
    work = _Pass()
    nudged = False
    done: set[concurrent.futures.Future[outbound.Response]] = set()
    claimed_at = busy_at = time.monotonic() - POLL_SECONDS
    try:
        while True:
            claimed = 0
            free = settings.WEBHOOKS_PASS_IN_FLIGHT - len(work.flights)
            now = time.monotonic()
            if now - claimed_at >= POLL_SECONDS or work.claim_now:  # every POLL_SECONDS, not after each answer
                claimed_at = now
                work.claim_now = False
                if now < claim_until:
                    if free > 0:
                        claimed = work.claim(free)
                elif work.flights:
                    if not nudged:  # another worker process takes up claiming everything
                        services.next_pass_nudge()
                        nudged = True
                    if free > 0 and now < quick_until and work.slow_flying():
                        claimed = work.claim(free, quick_only=True)
            if claimed or work.flights:
                busy_at = now
            if not work.flights:
                if time.monotonic() < min(claim_until, busy_at + LINGER_SECONDS):
                    time.sleep(max(0.0, claimed_at + POLL_SECONDS - time.monotonic()))
                    continue
                return work.report
            if not done:
                wait = max(0.0, claimed_at + POLL_SECONDS - time.monotonic())
                done, _ = concurrent.futures.wait(
                    list(work.flights), timeout=wait, return_when=concurrent.futures.FIRST_COMPLETED
                )
                done = set(done)
            settling_until = time.monotonic() + POLL_SECONDS
            work.settle_successes(done)
            while done and time.monotonic() < settling_until:
                work.settle(done.pop())
            work.slow_flying()  # marks the endpoints whose requests are open too long
    finally:
        for flight in work.flights.values():  # only on an error of our own: the repair pass finds them
            logger.warning("webhook attempt %s left Sending", flight.attempt.id)
        work.close()

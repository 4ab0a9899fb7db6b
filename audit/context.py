"""Who acts in the current request, for the audit log: the person signed in or the API key,
and the client's address. Set by authentication (accounts.middleware for a session,
accounts.authentication for a key: no query), cleared after each request by
`AuditContextMiddleware`; a task acts as no one (the system)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Actor:
    person: Any = None  # accounts.User
    key: Any = None  # accounts.ApiKey
    ip: str | None = None


SYSTEM = Actor()
_actor: ContextVar[Actor] = ContextVar("audit_actor", default=SYSTEM)


def actor_set(*, person=None, key=None, ip: str | None = None) -> None:
    _actor.set(Actor(person=person, key=key, ip=ip or None))


def actor() -> Actor:
    return _actor.get()


class AuditContextMiddleware:
    """Each request starts as no one and leaves no actor behind for the next one."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        token = _actor.set(SYSTEM)
        try:
            return self.get_response(request)
        finally:
            _actor.reset(token)

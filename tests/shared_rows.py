"""Accounts, keys and signed-in sessions that the tests of one module share: written and
committed once, before the module's first test, and deleted after its last.

For modules whose many parametrized cases each made the same callers again (a user per kind of
credential or per role, signed in, a key issued): tests/platform/test_authorization_table.py and
tests/accounts/test_roles.py. Each test still runs in a transaction of its own that is rolled back
at its end, so whatever a test did to the shared rows (a session signed out or rotated, a
membership left, a key's last use) is gone for the next; each test gets new clients carrying
the shared session cookie or key, so no cookie passes from one test to the next either.

At the module's end every table must hold as many rows as before its first test: a row the
module left behind would be seen by the next module's tests, and the check fails the run instead.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection
from rest_framework.test import APIClient

from accounts.models import User
from accounts.services import IssuedKey, api_key_create
from accounts.stepup import STEP_UP_AT
from audit.models import AuditEntry


def _row_counts() -> dict[str, int]:
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cursor:
        counts = {}
        for table in sorted(tables):
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")  # noqa: S608 - table names from Django
            counts[table] = cursor.fetchone()[0]
    return counts


class SharedRows:
    """Made in a module-scoped fixture that depends on `django_db_setup` and
    `django_db_blocker`: the rows are written in `with rows.writing():` (rows.user, rows.key,
    rows.session), the fixture yields, and `rows.remove()` deletes them after the last test."""

    def __init__(self, django_db_blocker) -> None:
        self._blocker = django_db_blocker
        self._users: list[int] = []
        self._sessions: list[str] = []
        self._before: dict[str, int] | None = None

    @contextmanager
    def writing(self) -> Iterator[SharedRows]:
        with self._blocker.unblock():
            if self._before is None:
                self._before = _row_counts()
            yield self

    def user(self, label: str, **extra) -> User:
        user = User.objects.create_user(
            f"{label}-{uuid.uuid4().hex[:8]}@example.com", "a long enough passphrase", **extra
        )
        self._users.append(user.pk)
        return user

    def key(self, user: User, scopes: list[str], **kwargs) -> IssuedKey:
        return api_key_create(user=user, name="t", scopes=scopes, **kwargs)

    def session(self, user: User, **data) -> str:
        """A session signed in as `user` (Django's force_login, as tests/conftest.py's helpers
        do), with `data` put in it through the session's own API; its key."""
        client = APIClient()
        client.force_login(user)
        session = client.session
        for name, value in data.items():
            session[name] = value
        session.save()
        self._sessions.append(session.session_key)
        return session.session_key

    def remove(self) -> None:
        with self._blocker.unblock():
            Session.objects.filter(session_key__in=self._sessions).delete()
            # The audit log's entries outlive their account; only the retention purge removes them.
            AuditEntry.objects.filter(organization_id__in=self._users).purge()
            User.objects.filter(pk__in=self._users).delete()
            before = self._before or {}
            left = {
                table: (before.get(table), count)
                for table, count in _row_counts().items()
                if count != before.get(table)
            }
        assert not left, f"rows the module shared are left (table: rows before, after): {left}"


def session_client(session_key: str, *, stepped_up: bool = False) -> APIClient:
    """A new client carrying a shared session. `stepped_up`: the session proved a second factor
    just now (as tests/conftest.py's `stepped_up`), written in the test's own transaction: the
    shared session's proof would otherwise run out (STEP_UP_MINUTES) in a module that runs long."""
    client = APIClient()
    client.cookies[settings.SESSION_COOKIE_NAME] = session_key
    if stepped_up:
        session = client.session
        session[STEP_UP_AT] = time.time()
        session.save()
    return client


def key_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client

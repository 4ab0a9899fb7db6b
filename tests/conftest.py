from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.test import APIClient

import outbound
import tests.flush
from accounts.models import User
from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create
from accounts.sessions import SECOND_FACTOR
from accounts.stepup import STEP_UP_AT

# `make test-fast` leaves out what is marked `slow`: besides tests marked by hand (real Celery
# workers, started services, `make run`), every test in these folders, using these fixtures (a
# browser, an anvil chain node, LNbits, the production password hasher timed), or running the
# service on SQLite in a process of its own (tests/sqlite.py: all migrations on a new file).
SLOW_FOLDERS = ("e2e", "scenarios", "bench")
SLOW_FIXTURES = {"chromium", "anvil_factory", "nodes", "lnbits", "argon2"}

TESTS = Path(__file__).resolve().parent


def pytest_configure(config) -> None:
    tests.flush.install()


@pytest.hookimpl(tryfirst=True)  # marked before `-m "not slow"` deselects
def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        relative = item.path.relative_to(TESTS).as_posix()
        in_sqlite = getattr(item.module, "run_on_sqlite", None) is not None
        if relative.split("/", 1)[0] in SLOW_FOLDERS or SLOW_FIXTURES & set(item.fixturenames) or in_sqlite:
            item.add_marker(pytest.mark.slow)


def own_cache_keys_delete() -> None:
    """Empties this run's part of the default cache. On Redis that is the keys under its own
    KEY_PREFIX (tests/settings.py: one per xdist worker), deleted by SCAN and DEL: never FLUSHDB
    (Django's RedisCache.clear()), which would wipe every other run's keys in the database."""
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        backend.clear()
        return
    client = backend._cache.get_client(write=True)
    pattern = re.sub(r"([\\*?\[\]])", r"\\\1", backend.key_prefix) + ":*"  # the prefix taken literally
    batch: list[bytes] = []
    for key in client.scan_iter(match=pattern, count=1000):
        batch.append(key)
        if len(batch) == 500:
            client.delete(*batch)
            batch.clear()
    if batch:
        client.delete(*batch)


@pytest.fixture(autouse=True)
def _clear_cache():
    own_cache_keys_delete()
    yield
    own_cache_keys_delete()


@pytest.fixture(autouse=True)
def _no_kept_connections():
    """Each test's local servers are its own: no connection kept alive from an earlier test."""
    outbound.keepalive.close_all()
    yield
    outbound.keepalive.close_all()


@pytest.fixture
def owner(db) -> User:
    return User.objects.create_user("owner@example.com", "correct horse battery staple")


@pytest.fixture
def other_account(db) -> User:
    return User.objects.create_user("other@example.com", "another long passphrase")


@pytest.fixture
def anon_client() -> APIClient:
    return APIClient()


@pytest.fixture
def session_client(owner) -> APIClient:
    """A logged-in browser session for the owner (CSRF enforced, as for a real browser)."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(owner)
    return client


def operator_sign_in(client, user: User) -> None:
    """An admin session, as signing in with the password and the authenticator app leaves it
    (tests/accounts/test_admin_sign_in.py takes those steps for real)."""
    client.force_login(user)
    session = client.session
    session[SECOND_FACTOR] = "totp"
    session.save()


def stepped_up(client, user: User | None = None):
    """A session that proved a second factor just now, as a sign-in with the authenticator app
    or a passkey (or POST /auth/step-up) leaves it (tests/accounts/test_step_up.py takes those
    steps for real). Signs `user` in first when given."""
    if user is not None:
        client.force_login(user)
    session = client.session
    session[STEP_UP_AT] = time.time()
    session.save()
    return client


@pytest.fixture
def make_key(owner) -> Callable[..., str]:
    def make(*scopes: str, user: User | None = None, **kwargs) -> str:
        return api_key_create(user=user or owner, name="test", scopes=list(scopes or ALL_SCOPES), **kwargs).key

    return make


@pytest.fixture
def api_client(make_key) -> APIClient:
    """A client authenticated with an API key carrying every scope."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key()}")
    return client


@pytest.fixture
def client_with_scopes(make_key) -> Callable[..., APIClient]:
    def make(*scopes: str, user: User | None = None) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(*scopes, user=user)}")
        return client

    return make


class FakeResolver:
    """DNS answers set by the test; a name it does not know does not resolve. DNS is the
    only thing the outbound guard's tests substitute: no real resolver can run here."""

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}
        self.calls: list[str] = []

    def resolve(self, host: str, port: int):
        self.calls.append(host)
        if host not in self.answers:
            raise outbound.UrlNotAllowed(f"The host {host} does not resolve.")
        return [ipaddress.ip_address(a) for a in self.answers[host]]


@pytest.fixture
def fake_dns() -> Iterator[FakeResolver]:
    resolver = FakeResolver()
    outbound.resolver_set(resolver)
    yield resolver
    outbound.resolver_set(None)

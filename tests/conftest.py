from __future__ import annotations

import ipaddress
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.test import APIClient

import outbound
import tests.flush
import tests.fresh
from accounts.models import User
from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create
from accounts.sessions import SECOND_FACTOR
from accounts.stepup import STEP_UP_AT
from tests.browser import chromium, shared_chromium  # noqa: F401 - fixtures: one browser per worker

# `make test-fast` leaves out what is marked `slow`: besides tests marked by hand (real Celery
# workers, started services, `make run`), every test in these folders, using these fixtures (a
# browser, an anvil chain node or `manage.py devchain`, LNbits, an MCP server of the test's own,
# the production password hasher timed), or running the
# service on SQLite in a process of its own (tests/sqlite.py: all migrations on a new file).
SLOW_FOLDERS = ("e2e", "scenarios", "bench")
SLOW_FIXTURES = {"chromium", "anvil_factory", "nodes", "lnbits", "argon2", "start_devchain", "mcp_server_with"}

TESTS = Path(__file__).resolve().parent
# The files that took longest in a measured run (docs/development.md, "Durations"), longest
# first: `make test` starts them before all others (files_first below).
LONGEST_FILES = (
    "platform/test_make_run.py",
    "platform/test_schemathesis.py",
    "bench/test_embedded_bench.py",
    "bench/test_detection_bench.py",
    "platform/test_runtime_requirements.py",  # its first run builds a production venv
    "webhooks/test_delivery_on_sqlite.py",
    "bench/test_benches.py",
)


def pytest_configure(config) -> None:
    tests.flush.install()


def pytest_unconfigure(config) -> None:
    tests.fresh.stop()


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    # Marked before every other implementation runs (`-m "not slow"` deselects in one of them).
    for item in items:
        relative = item.path.relative_to(TESTS).as_posix()
        in_sqlite = getattr(item.module, "run_on_sqlite", None) is not None
        if relative.split("/", 1)[0] in SLOW_FOLDERS or SLOW_FIXTURES & set(item.fixturenames) or in_sqlite:
            item.add_marker(pytest.mark.slow)
    result = yield
    files_first(items)
    return result


def files_first(items: list[pytest.Item]) -> None:
    """Orders the files with the most `slow` tests first, then the others by their number of
    tests, each file's tests together and in the order pytest-django gave them (transactional
    ones last). `make test` hands whole files to its workers in this order
    (--dist loadfile --no-loadscope-reorder): the long files (`make run`, schemathesis, browsers,
    chain nodes) start early and the many short ones even out the end, where xdist's own order
    (most tests first) left a few long files to one worker at the end."""
    slow: Counter[Path] = Counter(item.path for item in items if item.get_closest_marker("slow"))
    count: Counter[Path] = Counter(item.path for item in items)
    longest = {TESTS / name: len(LONGEST_FILES) - rank for rank, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: (-longest.get(item.path, 0), -slow[item.path], -count[item.path], str(item.path)))


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


@pytest.fixture(scope="session", autouse=True)
def _another_runs_keys_survive() -> Iterator[None]:
    """Nothing in this run empties a Redis database it shares: a key under another prefix, put in
    the cache's and the broker's database at the start, is still there at the end (FLUSHDB, as
    Django's RedisCache.clear() sends, or a purge beyond this run's prefix would make this fixture's
    teardown fail the run). Each xdist worker puts its own."""
    import redis
    from django.conf import settings

    backend = caches["default"]
    urls = {*(backend._servers if isinstance(backend, RedisCache) else ()), settings.CELERY_BROKER_URL}
    clients = [redis.Redis.from_url(url) for url in urls if url.startswith(("redis://", "rediss://"))]
    key = f"another-run-{uuid.uuid4().hex}:1:kept"
    for client in clients:
        client.set(key, b"kept", ex=24 * 3600)
    yield
    emptied = [client for client in clients if client.get(key) != b"kept"]
    for client in clients:
        client.delete(key)
    assert not emptied, f"a test emptied a shared Redis database (another prefix's key is gone): {emptied}"


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


@pytest.fixture(scope="session")
def mcp_url(django_db_setup, tmp_path_factory) -> Iterator[str]:
    """One MCP server (uvicorn, tests/mcp/conftest.py) for the session and every folder that
    uses it (its settings come from the environment, as in production)."""
    from tests.mcp.conftest import start_server, stop_server

    process, url = start_server(tmp_path_factory.mktemp("mcp"))
    yield url
    stop_server(process)


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

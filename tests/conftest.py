from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Iterator

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

import outbound
from accounts.models import User
from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create
from accounts.sessions import SECOND_FACTOR
from accounts.stepup import STEP_UP_AT


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


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


def step_up(client) -> None:
    """The session confirmed a second factor just now, as a step-up leaves it (accounts.stepup):
    what adding a passkey, creating an API key or turning the authenticator app off ask for."""
    session = client.session
    session[STEP_UP_AT] = time.time()
    session.save()


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

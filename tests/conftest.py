from __future__ import annotations

from collections.abc import Callable

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from accounts.models import User
from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


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

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.platform.urls")]


@override_settings(API_RATE_LIMITS={"read": "3/min", "write": "1/min"})
def test_each_api_key_has_its_own_budget(client_with_scopes):
    first, second = client_with_scopes("drafts:read"), client_with_scopes("drafts:read")
    assert [first.get("/api/v1/test/scoped").status_code for _ in range(4)] == [200, 200, 200, 429]
    refused = first.get("/api/v1/test/scoped").json()
    assert refused["code"] == "rate_limited" and refused["limit"] == "read"  # the budget spent
    assert second.get("/api/v1/test/scoped").status_code == 200


@override_settings(API_RATE_LIMITS={"read": "100/min", "write": "1/min"})
def test_writes_have_a_smaller_budget_than_reads(client_with_scopes):
    client = client_with_scopes("drafts:read", "drafts:write")
    assert client.post("/api/v1/test/scoped", {"amountSats": 1}, format="json").status_code == 200
    assert client.post("/api/v1/test/scoped", {"amountSats": 1}, format="json").status_code == 429
    assert client.get("/api/v1/test/scoped").status_code == 200


@override_settings(API_RATE_LIMITS={"read": "2/min", "write": "2/min"})
def test_anonymous_callers_are_limited_per_ip():
    a = APIClient(REMOTE_ADDR="198.51.100.1")
    b = APIClient(REMOTE_ADDR="198.51.100.2")
    assert [a.get("/api/v1/test/public").status_code for _ in range(3)] == [200, 200, 429]
    assert b.get("/api/v1/test/public").status_code == 200


@override_settings(API_AUTH_FAILURES_PER_MINUTE=3)
def test_guessing_keys_is_limited_per_ip_even_before_authentication(make_key):
    guesser = APIClient(REMOTE_ADDR="203.0.113.9")
    guesser.credentials(HTTP_AUTHORIZATION="Bearer pdk_" + "a" * 40)
    assert [guesser.get("/api/v1/auth/me").status_code for _ in range(4)] == [401, 401, 401, 429]
    guesser.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key('drafts:read')}")
    assert guesser.get("/api/v1/auth/me").status_code == 429  # the address stays blocked for the window
    honest = APIClient(REMOTE_ADDR="203.0.113.10")
    honest.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key('drafts:read')}")
    assert honest.get("/api/v1/auth/me").status_code == 200

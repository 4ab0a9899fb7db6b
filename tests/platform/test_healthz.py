import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_healthz_is_ok_when_the_database_and_broker_answer(anon_client):
    response = anon_client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}, "failed": []}


@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0", HEALTHZ_BROKER_TIMEOUT_SECONDS=1)
def test_healthz_is_503_naming_the_broker_when_it_is_down(anon_client):
    response = anon_client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "fail"
    assert body["failed"] == ["broker"]
    assert body["checks"]["database"] == "ok"

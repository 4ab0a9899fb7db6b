import pytest
from django.urls import reverse

from accounts.models import User
from tests.conftest import operator_sign_in
from tests.webhooks.conftest import deliver_due, record
from webhooks import endpoints
from webhooks.models import Delivery, EventType

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator_client(client):
    operator_sign_in(client, User.objects.create_superuser("operator@example.com", "operator passphrase"))
    return client


def test_the_admin_never_shows_a_webhook_secret(operator_client, make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    replaced = webhook.secret
    webhook = endpoints.webhook_rotate_secret(webhook=webhook, overlap_hours=24)  # both secrets sign
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})
    deliver_due()
    delivery = Delivery.objects.get()

    pages = [
        operator_client.get(reverse("admin:webhooks_webhook_changelist")),
        operator_client.get(reverse("admin:webhooks_webhook_change", args=[webhook.id])),
        operator_client.get(reverse("admin:webhooks_delivery_change", args=[delivery.id])),
    ]

    assert [page.status_code for page in pages] == [200, 200, 200]
    for secret in (replaced, webhook.secret):
        assert all(secret not in page.content.decode() for page in pages)
    assert receiver.url in pages[0].content.decode()


def test_endpoints_cannot_be_added_through_the_admin_bypassing_the_url_check(operator_client):
    assert operator_client.get(reverse("admin:webhooks_webhook_add")).status_code == 403

"""The delivery log names what went wrong, so an endpoint's operator knows what to fix: a host
that does not resolve (DNS), a certificate the service does not trust (TLS), a server too slow
(timeout), a refused connection."""

from __future__ import annotations

import pytest

from tests.webhooks.conftest import deliver_due, record, refusing_endpoint
from tests.webhooks.test_tls import https_receiver  # noqa: F401 - a local HTTPS server with its own CA
from webhooks.models import DeliveryAttempt, EventType

pytestmark = pytest.mark.django_db


def test_a_host_that_no_longer_resolves_is_named_as_dns(make_webhook, owner, fake_dns, receiver):
    make_webhook(f"http://localhost:{receiver.port}/hook")  # resolves (tests' DNS) when registered
    del fake_dns.answers["localhost"]  # then the name is gone
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    [attempt] = deliver_due()

    attempt.refresh_from_db()
    assert attempt.error == "DNS: The host localhost does not resolve."
    assert attempt.status_code is None and receiver.requests == []


def test_a_certificate_the_service_does_not_trust_is_named_as_tls(https_receiver, make_webhook, owner, settings):  # noqa: F811
    port, _, seen = https_receiver("localhost")
    settings.OUTBOUND_CA_BUNDLE = ""  # the public bundle does not know the receiver's own CA
    make_webhook(f"https://localhost:{port}/hook")
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    deliver_due()

    attempt = DeliveryAttempt.objects.get()
    assert attempt.error.startswith("TLS: certificate not trusted: "), attempt.error
    assert "unable to get local issuer certificate" in attempt.error
    assert seen["hosts"] == []


def test_a_certificate_for_another_name_is_named_as_tls(https_receiver, make_webhook, owner, settings):  # noqa: F811
    port, ca_path, _ = https_receiver("other.example")
    settings.OUTBOUND_CA_BUNDLE = str(ca_path)
    make_webhook(f"https://localhost:{port}/hook")
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    deliver_due()

    error = DeliveryAttempt.objects.get().error
    assert error.startswith("TLS: certificate") and "localhost" in error, error


def test_a_slow_server_is_named_as_a_timeout_and_a_closed_port_as_refused(make_webhook, make_receiver, owner, settings):
    settings.WEBHOOKS_TIMEOUT_SECONDS = 1
    slow = make_receiver(hold=True)
    make_webhook(slow.url)
    with refusing_endpoint() as closed:
        make_webhook(closed)
        record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})
        attempts = deliver_due()
    errors = sorted(DeliveryAttempt.objects.filter(pk__in=[a.pk for a in attempts]).values_list("error", "duration_ms"))
    assert errors[0] == ("Connection refused.", errors[0][1]) and errors[0][1] < 1000
    assert errors[1][0] == "No answer within 1 seconds." and errors[1][1] >= 900

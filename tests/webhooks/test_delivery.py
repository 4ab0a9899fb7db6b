"""Deliveries: signed POSTs to a real receiver, the retry schedule in PostgreSQL, DNS checked
again at delivery time, fairness between endpoints, and disabling a failing endpoint."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone
from standardwebhooks.webhooks import Webhook as StandardWebhook

import outbound
from core.wire import json_datetime
from tests.factories import draft_payment_observed, make_draft
from tests.webhooks.conftest import deliver_all_due, deliver_due, record
from webhooks import attempts as webhook_attempts
from webhooks import services, signing
from webhooks.models import AttemptState, Delivery, DeliveryAttempt, EventType

pytestmark = pytest.mark.django_db

START = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)  # in the past, so rows stay due afterwards


def test_a_delivery_is_a_signed_json_post_with_both_header_schemes(make_webhook, receiver, owner, send_due):
    webhook = make_webhook(receiver.url)
    event = record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d-1", "status": "Confirmed", "memo": "Grüße"})

    send_due()

    assert len(receiver.requests) == 1
    request = receiver.requests[0]
    delivery = Delivery.objects.get()
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["X-Service-Event"] == "draft.confirmed"
    assert request.headers["X-Service-Delivery"] == str(delivery.id)
    body = {
        "id": str(event.id),
        "event": "draft.confirmed",
        "createdAt": json_datetime(event.created_at),
        "objectId": None,  # "d-1" names no object
        "sequence": 1,
        "data": event.data,
    }
    assert json.loads(request.body) == body
    # The spec's scheme: keyed with the whole secret string, hex, over the raw body.
    expected = "sha256=" + hmac.new(webhook.secret.encode(), request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Service-Signature"] == expected
    # Standard Webhooks, checked by the reference verifier.
    assert request.headers["webhook-id"] == str(delivery.id)
    verified = StandardWebhook(webhook.secret).verify(request.body, request.headers)
    assert verified == body


def test_a_wrong_secret_fails_both_signature_checks(make_webhook, receiver, owner):
    make_webhook(receiver.url)
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d-1"})
    deliver_due()
    request = receiver.requests[0]
    wrong = signing.secret_generate()

    assert request.headers["X-Service-Signature"] != signing.service_signature(wrong, request.body)
    with pytest.raises(Exception, match="No matching signature"):
        StandardWebhook(wrong).verify(request.body, request.headers)


def test_only_subscribed_events_are_delivered(make_webhook, receiver, owner):
    make_webhook(receiver.url, events=["draft.confirmed"])
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    deliver_due()

    assert [r.headers["X-Service-Event"] for r in receiver.requests] == ["draft.confirmed"]


def test_events_of_another_account_do_not_reach_this_endpoint(make_webhook, receiver, owner, other_account):
    make_webhook(receiver.url)
    record(other_account, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    assert deliver_due() == []
    assert receiver.requests == []


def test_a_draft_confirmed_by_the_state_machine_is_delivered_with_its_payload(make_webhook, receiver, owner):
    webhook = make_webhook(receiver.url)
    draft = make_draft(owner, order_id="order-42")

    draft_payment_observed(draft_id=draft.id, tx_id="0xabc", received_base_units=25_000_000, confirmations=12)
    deliver_all_due()

    assert [r.headers["X-Service-Event"] for r in receiver.requests] == ["draft.seen", "draft.confirmed"]
    assert [json.loads(r.body)["sequence"] for r in receiver.requests] == [1, 2]  # made without draft.created
    bodies = {json.loads(r.body)["event"]: json.loads(r.body)["data"] for r in receiver.requests}
    assert set(bodies) == {"draft.seen", "draft.confirmed"}
    confirmed = bodies["draft.confirmed"]
    assert confirmed["draftId"] == str(draft.id)
    assert confirmed["status"] == "Confirmed"
    assert confirmed["txId"] == "0xabc"
    assert confirmed["confirmations"] == 12
    assert confirmed["sentCurrency"] == "USDC" and confirmed["network"] == "Ethereum"
    assert confirmed["amountSats"] == 25_000_000 and confirmed["sentAmount"] == "25.000000"
    assert confirmed["orderId"] == "order-42"
    assert confirmed["platformFee"]["feeBaseUnits"] == 100_000
    assert confirmed["occurredAt"].endswith("Z")
    for request in receiver.requests:
        StandardWebhook(webhook.secret).verify(request.body, request.headers)


def test_the_retry_schedule_is_1_2_4_8_16_32_64_minutes_then_failed(make_webhook, receiver, owner):
    receiver.status = 503
    make_webhook(receiver.url)
    attempt_times = []
    with time_machine.travel(START, tick=False) as clock:
        record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})
        for _ in range(20):
            attempts = deliver_due()
            if attempts:
                attempt_times.append(timezone.now())
                delivery = Delivery.objects.get()
                if delivery.status == "Pending":
                    # Not a second earlier: nothing is due.
                    clock.move_to(delivery.next_attempt_at - timedelta(seconds=1))
                    assert deliver_due() == []
                    clock.move_to(delivery.next_attempt_at)
            else:
                break

    delivery = Delivery.objects.get()
    assert [(t - START) / timedelta(minutes=1) for t in attempt_times] == [0, 1, 3, 7, 15, 31, 63, 127]
    assert delivery.status == "Failed"
    assert delivery.attempt_count == 8
    assert len(receiver.requests) == 8
    assert len({r.headers["X-Service-Delivery"] for r in receiver.requests}) == 1
    assert [a.status_code for a in delivery.attempts.all()] == [503] * 8


def test_a_retry_after_failures_succeeds_and_stops(make_webhook, receiver, owner):
    receiver.statuses = [500, 404]
    make_webhook(receiver.url)
    with time_machine.travel(START, tick=False) as clock:
        record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})
        deliver_due()
        clock.shift(timedelta(minutes=1))
        deliver_due()
        clock.shift(timedelta(minutes=2))
        deliver_due()
        clock.shift(timedelta(hours=3))
        assert deliver_due() == []

    delivery = Delivery.objects.get()
    assert delivery.status == "Succeeded"
    assert [a.status_code for a in delivery.attempts.all()] == [500, 404, 200]


@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_any_2xx_counts_as_delivered(make_webhook, receiver, owner, status):
    receiver.status = status
    make_webhook(receiver.url)
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})

    deliver_due()

    assert Delivery.objects.get().status == "Succeeded"


def test_a_redirect_is_not_followed_and_counts_as_a_failure(make_webhook, make_receiver, owner, send_due):
    target = make_receiver()
    redirecting = make_receiver(status=307)
    make_webhook(redirecting.url)
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})

    send_due()

    assert target.requests == []
    assert Delivery.objects.get().status == "Pending"
    assert DeliveryAttempt.objects.get().status_code == 307


def test_a_receiver_that_does_not_answer_in_time_is_retried(make_webhook, make_receiver, owner, settings, send_due):
    settings.WEBHOOKS_TIMEOUT_SECONDS = 1
    silent = make_receiver(hold=True)
    make_webhook(silent.url)
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})

    [attempt] = send_due()

    attempt.refresh_from_db()
    assert attempt.status_code is None
    assert "No answer within 1 seconds" in attempt.error
    assert 900 <= attempt.duration_ms < 5000
    assert Delivery.objects.get().status == "Pending"


def test_an_endpoint_dripping_its_answer_is_cut_off_at_the_time_out(make_webhook, owner, settings, send_due):
    import socket
    import threading
    import time

    settings.WEBHOOKS_TIMEOUT_SECONDS = 1
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    stop = threading.Event()

    def drip():
        conn, _ = listener.accept()
        conn.recv(65536)
        for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100:
            if stop.is_set():
                break
            try:
                conn.sendall(bytes([byte]))
            except OSError:
                break
            time.sleep(0.2)  # each byte well inside a per-read time-out
        conn.close()

    threading.Thread(target=drip, daemon=True).start()
    make_webhook(f"http://127.0.0.1:{listener.getsockname()[1]}/hook")
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})

    try:
        [attempt] = send_due()
    finally:
        stop.set()
        listener.close()

    attempt.refresh_from_db()
    assert attempt.status_code is None
    assert "No answer within 1 seconds" in attempt.error
    assert attempt.duration_ms < 3000


def test_the_response_body_read_is_capped(make_webhook, make_receiver, owner, settings, send_due):
    settings.WEBHOOKS_RESPONSE_MAX_BYTES = 1
    receiver = make_receiver(status=500)
    make_webhook(receiver.url)
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})

    send_due()

    assert DeliveryAttempt.objects.get().response_excerpt == "o"


def test_deliveries_can_arrive_out_of_order_and_each_keeps_its_id(make_webhook, receiver, owner):
    receiver.statuses = [503]  # the first delivery (draft.seen) fails once
    make_webhook(receiver.url)
    with time_machine.travel(START, tick=False) as clock:
        record(owner, EventType.DRAFT_SEEN, {"draftId": "d", "status": "Seen"})
        deliver_due()
        record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d", "status": "Confirmed"})
        deliver_due()
        clock.shift(timedelta(minutes=1))
        deliver_due()

    arrived = [(r.headers["X-Service-Event"], r.headers["X-Service-Delivery"]) for r in receiver.requests]
    assert [name for name, _ in arrived] == ["draft.seen", "draft.confirmed", "draft.seen"]
    assert arrived[0][1] == arrived[2][1] != arrived[1][1]
    assert set(Delivery.objects.values_list("status", flat=True)) == {"Succeeded"}


def test_a_duplicate_task_message_does_not_post_twice(make_webhook, receiver, owner):
    make_webhook(receiver.url)
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})
    [attempt_id] = services.deliveries_dispatch()

    first = webhook_attempts.delivery_attempt(attempt_id=attempt_id)
    second = webhook_attempts.delivery_attempt(attempt_id=attempt_id)

    assert first is not None and second is None
    assert len(receiver.requests) == 1


def test_running_the_dispatcher_twice_claims_each_due_delivery_once(make_webhook, receiver, owner):
    make_webhook(receiver.url)
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})

    first = services.deliveries_dispatch()
    second = services.deliveries_dispatch()

    assert len(first) == 1 and second == []


def test_an_attempt_whose_task_message_was_lost_is_sent_again_by_the_tick_once(make_webhook, receiver, owner):
    make_webhook(receiver.url)
    with time_machine.travel(START, tick=False) as clock:
        record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})
        [lost] = services.deliveries_dispatch(enqueue=False)  # claimed; its task message never arrives
        clock.shift(timedelta(seconds=119))
        assert deliver_due() == []  # due again by the schedule, but its attempt is still owed
        clock.shift(timedelta(seconds=1))
        [again] = deliver_due()
        assert webhook_attempts.delivery_attempt(attempt_id=lost) is None  # the original message, late

    assert again.id == lost and again.number == 1
    assert Delivery.objects.get().status == "Succeeded"
    assert len(receiver.requests) == 1


def test_an_attempt_whose_worker_died_while_sending_is_retried_on_schedule(make_webhook, receiver, owner):
    make_webhook(receiver.url)
    with time_machine.travel(START, tick=False) as clock:
        record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})
        [lost] = services.deliveries_dispatch(enqueue=False)
        # The worker took it (Claimed -> Sending) and died before recording a result.
        DeliveryAttempt.objects.filter(id=lost).update(state=AttemptState.SENDING, started_at=timezone.now())
        clock.shift(timedelta(seconds=59))
        assert deliver_due() == []
        clock.shift(timedelta(seconds=1))
        [retry] = deliver_due()

    assert DeliveryAttempt.objects.get(id=lost).state == AttemptState.INTERRUPTED
    assert retry.number == 2
    assert Delivery.objects.get().status == "Succeeded"


def test_a_dns_answer_that_turns_private_after_registration_is_not_called(
    make_webhook, owner, fake_dns, loopback, send_due
):
    fake_dns.answers["hooks.example.com"] = ["93.184.216.34"]
    webhook = make_webhook("https://hooks.example.com/pay")
    fake_dns.answers["hooks.example.com"] = ["10.0.0.7"]  # rebinding
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    [attempt] = send_due()  # pytest-socket would fail this test on any connection to 10.0.0.7

    attempt.refresh_from_db()
    assert fake_dns.calls == ["hooks.example.com", "hooks.example.com"]
    assert attempt.status_code is None
    assert "private or internal address" in attempt.error and "10.0.0.7" not in attempt.error
    assert Delivery.objects.get(webhook=webhook).status == "Pending"


def test_the_connection_goes_to_the_address_checked_with_the_name_as_host_header(
    make_webhook, receiver, owner, fake_dns, send_due
):
    class AnswerOnceResolver:
        """Answers 127.0.0.1 once, then a private address: any second lookup would be caught."""

        def __init__(self):
            self.answers = iter([["127.0.0.1"], ["127.0.0.1"], ["10.9.9.9"]])

        def resolve(self, host, port):
            import ipaddress

            return [ipaddress.ip_address(a) for a in next(self.answers)]

    outbound.resolver_set(AnswerOnceResolver())
    make_webhook(f"http://localhost:{receiver.port}/hooks")
    record(owner, EventType.DRAFT_SEEN, {"draftId": "d"})

    send_due()

    assert len(receiver.requests) == 1
    assert receiver.requests[0].headers["Host"] == f"localhost:{receiver.port}"


def test_a_failing_endpoint_holds_few_workers_so_others_keep_flowing(make_webhook, make_receiver, owner, settings):
    settings.WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT = 2
    dead, healthy = make_receiver(), make_receiver()
    dead_hook, healthy_hook = make_webhook(dead.url), make_webhook(healthy.url)
    for n in range(5):
        record(owner, EventType.DRAFT_SEEN, {"draftId": f"d{n}"})

    claimed = DeliveryAttempt.objects.filter(id__in=services.deliveries_dispatch())

    per_endpoint = {hook.id: claimed.filter(delivery__webhook=hook).count() for hook in (dead_hook, healthy_hook)}
    assert per_endpoint == {dead_hook.id: 2, healthy_hook.id: 2}
    # Once an endpoint has failed it gets one attempt in flight at a time.
    dead_hook.last_failure_at = timezone.now()
    dead_hook.save()
    DeliveryAttempt.objects.update(state=AttemptState.DONE)
    again = DeliveryAttempt.objects.filter(id__in=services.deliveries_dispatch())
    assert again.filter(delivery__webhook=dead_hook).count() == 1
    assert again.filter(delivery__webhook=healthy_hook).count() == 2


def test_a_backlog_of_one_account_at_a_refusing_endpoint_does_not_hold_up_another_accounts_delivery(
    make_webhook, receiver, refusing_url, owner, other_account, settings
):
    settings.WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT = 2
    refusing = make_webhook(refusing_url, user=other_account)
    make_webhook(receiver.url)
    for n in range(250):  # more than a tick takes (WEBHOOKS_DISPATCH_BATCH), all older than the other's
        record(other_account, EventType.DRAFT_SEEN, {"draftId": f"c{n}"})
    record(owner, EventType.DRAFT_SEEN, {"draftId": "b1"})

    first = deliver_due()

    assert [json.loads(r.body)["data"]["draftId"] for r in receiver.requests] == ["b1"]
    assert [a.delivery.webhook_id for a in first].count(refusing.id) == 2  # within its cap, and refused
    assert all(a.delivery.webhook_id != refusing.id or a.status_code is None for a in first)
    # Now failing, the refusing endpoint gets one attempt a tick; the other account still gets its own.
    record(owner, EventType.DRAFT_SEEN, {"draftId": "b2"})
    second = deliver_due()
    assert [json.loads(r.body)["data"]["draftId"] for r in receiver.requests] == ["b1", "b2"]
    assert [a.delivery.webhook_id for a in second].count(refusing.id) == 1


def test_a_tick_reads_past_several_endpoints_backlogs_to_reach_the_others(
    make_webhook, receiver, refusing_url, owner, other_account, settings
):
    settings.WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT = 2
    seen = make_webhook(f"{refusing_url}/seen", user=other_account, events=[EventType.DRAFT_SEEN])
    expired = make_webhook(f"{refusing_url}/expired", user=other_account, events=[EventType.DRAFT_EXPIRED])
    make_webhook(receiver.url)
    for type, endpoint in ((EventType.DRAFT_SEEN, "s"), (EventType.DRAFT_EXPIRED, "e")):
        for n in range(250):  # each backlog alone more than a tick takes, one after the other
            record(other_account, type, {"draftId": f"{endpoint}{n}"})
    record(owner, EventType.DRAFT_SEEN, {"draftId": "b1"})

    attempts = deliver_due()

    assert [json.loads(r.body)["data"]["draftId"] for r in receiver.requests] == ["b1"]
    per_endpoint = [a.delivery.webhook_id for a in attempts]
    assert per_endpoint.count(seen.id) == per_endpoint.count(expired.id) == 2
    # The oldest of each backlog, as they are oldest first
    assert {a.delivery.event.data["draftId"] for a in attempts} == {"s0", "s1", "e0", "e1", "b1"}

"""The "Needs attention" list: each kind appears when the services put an object in that state
and goes away when the merchant acts on it from the overview (a form with its CSRF token, a
confirmation step where the action cannot be undone); REST answers the same list, a test key
only test items; the navigation shows the count."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.test import Client, override_settings
from django.utils import timezone

from accounts.models import ApiKey
from accounts.services import api_key_create
from attention.selectors import attention_of
from chainwatch.unmatched import simulated_transfer_report
from drafts.enums import DraftStatus
from drafts.models import Draft
from drafts.simulation import draft_payment_simulate, draft_reorg_simulate
from refunds import services as refund_services
from refunds.models import Refund
from tests.conftest import stepped_up
from tests.drafts.conftest import FEE_ADDRESSES
from tests.factories import draft_payment_observed, make_draft
from tests.refunds.conftest import CUSTOMER
from tests.webhooks.conftest import deliver_due, loopback, make_receiver, record  # noqa: F401 - fixtures
from webhooks import endpoints
from webhooks.models import EventType, Webhook

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _operator():
    with override_settings(
        PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES,
        API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"},
    ):
        yield


@pytest.fixture
def browser(owner) -> Client:
    """A signed-in browser that sends the CSRF token as a form does."""
    return stepped_up(Client(enforce_csrf_checks=True), owner)


def kinds(user) -> list[str]:
    return [item.kind for item in attention_of(user).items]


def overview(browser: Client) -> str:
    response = browser.get("/dashboard/")
    assert response.status_code == 200
    return response.content.decode()


def submit(browser: Client, html: str, action: str, **fields) -> tuple[int, str]:
    """Post the form of the page whose action is `action`, with its hidden fields and CSRF token."""
    match = re.search(rf'<form method="post" action="{re.escape(action)}"[^>]*>(.*?)</form>', html, re.S)
    assert match, f"no form posts to {action}"
    body = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', match.group(1)))
    response = browser.post(action, body | fields, follow=True)
    return response.status_code, response.content.decode()


def paid(draft: Draft, *, received: int | None = None, confirmations: int = 0, tx: str = "0x" + "aa" * 32):
    return draft_payment_observed(
        draft_id=draft.id,
        tx_id=tx,
        received_base_units=draft.amount_base_units if received is None else received,
        confirmations=confirmations,
    )


def test_an_underpaid_payment_is_listed_and_accepting_it_from_the_overview_asks_first(browser, owner):
    draft = make_draft(owner)
    assert kinds(owner) == []
    paid(draft, received=draft.amount_base_units * 95 // 100)
    assert kinds(owner) == ["underpaid"]

    html = overview(browser)
    assert 'id="attention-count">1<' in html  # the navigation's count
    status, asked = submit(browser, html, f"/dashboard/drafts/{draft.id}/accept")
    assert status == 200 and "Accept the received amount?" in asked
    draft.refresh_from_db()
    assert draft.status == DraftStatus.AMOUNT_MISMATCH  # not before the confirmation's own post

    status, _ = submit(browser, asked, f"/dashboard/drafts/{draft.id}/accept")
    draft.refresh_from_db()
    assert status == 200 and draft.accepted_by_owner
    assert kinds(owner) == ["confirming"]  # accepted: it now confirms as any payment does


def test_an_overpaid_payment_is_listed_and_cancelling_it_asks_first(browser, owner):
    draft = make_draft(owner)
    paid(draft, received=draft.amount_base_units * 105 // 100)
    assert kinds(owner) == ["overpaid"]

    status, asked = submit(browser, overview(browser), f"/dashboard/drafts/{draft.id}/cancel")
    draft.refresh_from_db()
    assert status == 200 and "Cancel this draft?" in asked and draft.status == DraftStatus.AMOUNT_MISMATCH

    submit(browser, asked, f"/dashboard/drafts/{draft.id}/cancel")
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CANCELLED and kinds(owner) == []


def test_a_confirming_payment_is_listed_until_it_confirms(owner):
    draft = make_draft(owner)
    paid(draft, confirmations=1)
    assert kinds(owner) == ["confirming"]
    paid(draft, confirmations=draft.required_confirmations)
    assert kinds(owner) == []


def test_a_reverted_payment_is_listed_and_cancelling_the_draft_clears_it(browser, owner):
    draft = make_draft(owner, livemode=False, network="Sepolia")
    mode_on = browser.post  # the Test mode switch, as the header's form sends it
    overview(browser)
    assert mode_on("/dashboard/mode", {"testMode": "on", "csrfmiddlewaretoken": browser.cookies["csrftoken"].value})
    draft_payment_simulate(draft=draft, outcome="exact", confirmations=0)
    draft_reorg_simulate(draft=Draft.objects.get(pk=draft.pk))
    test_owner = type(owner).objects.get(pk=owner.pk)
    test_owner.livemode = False
    assert kinds(test_owner) == ["reverted"]
    assert kinds(owner) == []  # live mode never sees a test draft

    html = overview(browser)
    assert "Payment reverted" in html
    _, asked = submit(browser, html, f"/dashboard/drafts/{draft.id}/cancel")
    submit(browser, asked, f"/dashboard/drafts/{draft.id}/cancel")
    assert kinds(test_owner) == []


def test_an_unmatched_transfer_is_listed_and_attaching_it_from_the_overview_clears_it(browser, owner):
    draft = make_draft(owner)
    simulated_transfer_report(draft=draft, tx_id="0x" + "bb" * 32, amount_base_units=24_000_000, now=timezone.now())
    [item] = attention_of(owner).items
    assert item.kind == "unmatchedTransfer"

    status, _ = submit(
        browser,
        overview(browser),
        f"/dashboard/transfers/{item.id}/attach",
        **{f"{item.id}-draftId": str(draft.id), f"{item.id}-acceptAmount": "on"},
    )
    draft.refresh_from_db()
    assert status == 200 and draft.status != DraftStatus.PENDING
    assert "unmatchedTransfer" not in kinds(owner)


def test_a_claimed_refund_is_listed_and_approving_it_from_the_overview_clears_it(browser, owner):
    draft = paid(make_draft(owner), confirmations=100)
    assert draft.status == DraftStatus.CONFIRMED
    refund = refund_services.refund_issue(user=owner, draft=draft, full=True)
    assert kinds(owner) == []  # issued: the customer has not named an address yet
    refund_services.refund_claim(token=refund.token, refund_address=CUSTOMER["Ethereum"])
    assert kinds(owner) == ["refundClaimed"]

    submit(browser, overview(browser), f"/dashboard/refunds/{refund.id}/approve")
    assert Refund.objects.get(pk=refund.pk).status == "Approved"
    assert kinds(owner) == []


def test_a_failing_then_disabled_endpoint_is_listed_and_re_enabled_from_the_overview(
    browser,
    owner,
    settings,
    make_receiver,  # noqa: F811 - the fixture imported above
    loopback,  # noqa: F811
    fake_dns,
):
    settings.WEBHOOKS_DISABLE_AFTER_FAILED_DELIVERIES = 2
    receiver = make_receiver(status=500)
    webhook = endpoints.webhook_create(user=owner, url=receiver.url, events=None)
    start = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    with time_machine.travel(start, tick=False) as clock:
        record(owner, EventType.DRAFT_SEEN, {"draftId": "a"})
        while Webhook.objects.get(pk=webhook.pk).consecutive_failures < 1:
            deliver_due()
            clock.shift(timedelta(minutes=65))
        assert kinds(owner) == ["webhookFailing"]
        record(owner, EventType.DRAFT_SEEN, {"draftId": "b"})
        while Webhook.objects.get(pk=webhook.pk).active:
            deliver_due()
            clock.shift(timedelta(minutes=65))
        assert kinds(owner) == ["webhookDisabled"]

        receiver.status = 200
        submit(browser, overview(browser), f"/dashboard/webhooks/{webhook.id}/enable")
    assert Webhook.objects.get(pk=webhook.pk).active
    assert kinds(owner) == []


def test_an_endpoint_its_owner_turned_off_is_not_listed(owner, loopback, fake_dns):  # noqa: F811
    webhook = endpoints.webhook_create(user=owner, url="http://127.0.0.1:9/hooks", events=None)
    endpoints.webhook_update(webhook=webhook, active=False)
    assert kinds(owner) == []


def test_a_key_about_to_expire_is_listed_and_rotating_it_asks_first_then_replaces_it(browser, owner):
    with time_machine.travel(timezone.now() - timedelta(days=90), tick=False):
        old = api_key_create(
            user=owner, name="shop", scopes=["drafts:read"], expires_at=timezone.now() + timedelta(days=93)
        )
    assert kinds(owner) == ["apiKeyExpiring"]

    status, asked = submit(browser, overview(browser), f"/dashboard/api-keys/{old.api_key.id}/rotate")
    assert status == 200 and "Rotate this key?" in asked
    assert ApiKey.objects.get(pk=old.api_key.pk).revoked_at is None

    _, shown = submit(browser, asked, f"/dashboard/api-keys/{old.api_key.id}/rotate")
    new = ApiKey.objects.get(user=owner, revoked_at__isnull=True)
    assert new.prefix in shown and new.name == "shop" and new.scopes == ["drafts:read"]
    assert new.expires_at > timezone.now() + timedelta(days=90)
    assert ApiKey.objects.get(pk=old.api_key.pk).revoked_at is not None
    assert kinds(owner) == []


def test_rest_answers_the_same_items_and_a_test_key_only_test_items(owner, make_key, client_with_scopes):
    from rest_framework.test import APIClient

    live = make_draft(owner)
    paid(live, received=live.amount_base_units * 95 // 100)
    test = make_draft(owner, livemode=False, network="Sepolia")
    draft_payment_simulate(draft=test, outcome="over", confirmations=0)

    def get(key: str) -> dict:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        response = client.get("/api/v1/attention")
        assert response.status_code == 200, response.content
        return response.json()

    live_body = get(make_key())
    assert [(i["kind"], i["id"], i["actions"]) for i in live_body["items"]] == [
        ("underpaid", str(live.id), ["accept", "cancel"])
    ]
    assert live_body["counts"]["underpaid"] == 1 and live_body["total"] == 1
    test_body = get(make_key(livemode=False))
    assert [(i["kind"], i["id"]) for i in test_body["items"]] == [("overpaid", str(test.id))]

    refused = client_with_scopes("refunds:read").get("/api/v1/attention")
    assert refused.status_code == 403


def test_a_key_sees_the_sections_its_scopes_read(owner, make_key, loopback, fake_dns):  # noqa: F811
    from rest_framework.test import APIClient

    webhook = endpoints.webhook_create(user=owner, url="http://127.0.0.1:9/hooks", events=None)
    Webhook.objects.filter(pk=webhook.pk).update(active=False, disabled_reason="2 deliveries in a row failed.")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key('drafts:read')}")
    assert client.get("/api/v1/attention").json()["items"] == []
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key('drafts:read', 'webhooks:manage')}")
    assert [i["kind"] for i in client.get("/api/v1/attention").json()["items"]] == ["webhookDisabled"]


def _every_kind(owner, n: int, start: int = 0) -> None:
    """n items of each kind (rows as the services leave them; this counts reads, not transitions)."""
    now = timezone.now()
    for i in range(start, start + n):
        amount = 30_000_000 + i * 10
        make_draft(owner, status="AmountMismatch", amount_base_units=amount, received_base_units=amount - 5)
        make_draft(owner, status="AmountMismatch", amount_base_units=amount + 1, received_base_units=amount + 9)
        make_draft(owner, status="Seen", amount_base_units=amount + 2, received_base_units=amount + 2, seen_at=now)
        make_draft(owner, amount_base_units=amount + 3, payment_reverted_at=now)
        target = make_draft(owner, amount_base_units=amount + 4, receiver_address=f"0x{i:040x}")
        simulated_transfer_report(draft=target, tx_id=f"0x{i:064x}", amount_base_units=5, now=now)
        paid_draft = make_draft(owner, status="Confirmed", amount_base_units=amount + 5, paid_tx_id=f"0xp{i}")
        Refund.objects.create(
            user=owner,
            draft=paid_draft,
            token=f"t{i}",
            status="Claimed",
            currency="USDC",
            network="Ethereum",
            amount_base_units=1,
            share_base_units=1,
            expires_at=now + timedelta(days=1),
            claimed_at=now,
        )
        Webhook.objects.create(user=owner, url=f"https://example.com/{i}", active=False, disabled_reason="failed")
        Webhook.objects.create(user=owner, url=f"https://example.org/{i}", consecutive_failures=1, last_failure_at=now)
        api_key_create(user=owner, name=f"k{i}", scopes=["drafts:read"], expires_at=now + timedelta(days=2))


@pytest.mark.parametrize("surface", ["service", "rest", "overview"])
def test_the_reads_do_not_grow_with_the_items(owner, make_key, browser, surface):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    key = make_key()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            if surface == "service":
                assert len(attention_of(owner).items) >= 9
            elif surface == "rest":
                assert client.get("/api/v1/attention").status_code == 200
            else:
                assert browser.get("/dashboard/").status_code == 200
        return len(queries)

    _every_kind(owner, 1)
    count()  # the first keyed call also records the key's use (once a minute)
    one = count()
    _every_kind(owner, 19, start=1)
    assert len(attention_of(owner).items) == 9 * 20
    assert count() == one


def test_a_member_sees_the_list_with_only_the_buttons_their_role_may_use(owner):
    from tests.accounts.teams import member

    draft = make_draft(owner)
    paid(draft, received=draft.amount_base_units * 95 // 100)
    viewer, _ = member(owner, "viewer", Client)
    developer, _ = member(owner, "developer", Client)
    support, _ = member(owner, "support", Client)

    for client in (viewer, developer):
        html = client.get("/dashboard/").content.decode()
        assert "Underpaid" in html and "Your role cannot act on this." in html
        assert f"/dashboard/drafts/{draft.id}/accept" not in html
    assert f'action="/dashboard/drafts/{draft.id}/accept"' in support.get("/dashboard/").content.decode()

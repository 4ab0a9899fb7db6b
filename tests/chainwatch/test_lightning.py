"""Lightning settlement through LUD-21 verify URLs, LND REST and LNbits (local servers)."""

from __future__ import annotations

import hashlib
import os
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from chainwatch.models import Cursor
from chainwatch.tasks import watcher_run
from drafts.enums import DraftStatus
from payments.enums import Currency, FeePlacement, Method, Network
from tests.chainwatch.fakes_lightning import FakeLightning
from tests.factories import make_draft
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def events_of(draft) -> list[str]:
    return list(Event.objects.filter(draft_id=draft.id).order_by("created_at", "id").values_list("type", flat=True))


def invoice_secret() -> tuple[str, str]:
    preimage = os.urandom(32)
    return preimage.hex(), hashlib.sha256(preimage).hexdigest()


def ln_draft(owner, payment_hash: str, **fields):
    defaults = {
        "network": Network.MAINNET,
        "currency": Currency.BTC,
        "method": Method.LIGHTNING,
        "receiver_address": None,
        "lightning_address": "shop@example.com",
        "bolt11": "lnbc10u1p...",
        "payment_hash": payment_hash,
        "amount_base_units": 1000,
        "fee_placement": FeePlacement.ACCRUED,
        "required_confirmations": 1,
    }
    return make_draft(owner, **{**defaults, **fields})


@pytest.fixture
def provider(fake_server, settings):
    node = FakeLightning()
    node.server = fake_server(node.handler)
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    settings.LND_REST_URL = settings.LNBITS_URL = ""
    settings.OUTBOUND_ALLOW_LOOPBACK = True  # the verify URL is on 127.0.0.1
    settings.CHAINWATCH_LND_STREAM_IDLE_MS = 500  # the fake sends its backlog at once
    return node


def watch():
    watcher_run(Network.MAINNET, "lightning")
    assert Cursor.objects.get(network=Network.MAINNET, family="lightning").last_error == ""


def test_a_lud21_settlement_with_the_right_preimage_confirms_the_draft(owner, provider):
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash, lnurl_verify_url=f"{provider.server.url}/verify/{payment_hash}")
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING

    provider.settle(payment_hash, preimage)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_id == payment_hash
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]


def test_a_settlement_whose_preimage_does_not_hash_to_the_payment_hash_is_ignored(owner, provider):
    _, payment_hash = invoice_secret()
    wrong_preimage, _ = invoice_secret()
    draft = ln_draft(owner, payment_hash, lnurl_verify_url=f"{provider.server.url}/verify/{payment_hash}")
    provider.settle(payment_hash, wrong_preimage)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and events_of(draft) == []


def test_lnd_rest_reports_the_settlement_with_a_base64_preimage(owner, provider, settings):
    settings.LND_REST_URL = provider.server.url
    settings.LND_MACAROON_HEX = "0201abcd"
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash)
    provider.settle(payment_hash, preimage)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED


def test_lnbits_reports_the_settlement_with_the_api_key(owner, provider, settings):
    settings.LNBITS_URL = provider.server.url
    settings.LNBITS_API_KEY = "invoice-key"
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash)
    provider.settle(payment_hash, preimage)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED


def test_watching_a_settled_invoice_again_confirms_it_only_once(owner, provider):
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash, lnurl_verify_url=f"{provider.server.url}/verify/{payment_hash}")
    provider.settle(payment_hash, preimage)
    watch()
    watch()
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]


def test_an_invoice_settled_after_the_draft_expired_is_reported_as_paid_late(owner, provider):
    from datetime import timedelta

    from django.utils import timezone

    preimage, payment_hash = invoice_secret()
    draft = ln_draft(
        owner,
        payment_hash,
        lnurl_verify_url=f"{provider.server.url}/verify/{payment_hash}",
        status=DraftStatus.EXPIRED,
        expires_at=timezone.now() - timedelta(hours=1),
        created_at=timezone.now() - timedelta(hours=2),
    )
    provider.settle(payment_hash, preimage)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_late is True


def test_a_verify_url_that_now_resolves_to_a_private_address_is_not_fetched(owner, provider, settings, fake_dns):
    # The receiver's LNURL server handed out the verify URL; its DNS can change afterwards.
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    fake_dns.answers["verify.example.com"] = ["10.0.0.8"]
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash, lnurl_verify_url=f"https://verify.example.com/verify/{payment_hash}")
    provider.settle(payment_hash, preimage)

    watcher_run(Network.MAINNET, "lightning")

    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING
    assert fake_dns.calls == ["verify.example.com"]


def test_a_loopback_verify_url_is_not_fetched_without_the_loopback_setting(owner, provider, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash, lnurl_verify_url=f"{provider.server.url}/verify/{payment_hash}")
    provider.settle(payment_hash, preimage)

    watcher_run(Network.MAINNET, "lightning")

    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING
    assert provider.server.requests == []


# --- Cost per pass: the node's own index, never one look-up per invoice ---------------------


def node_requests(provider, since: int) -> list[str]:
    return [path for _, path in provider.server.requests[since:]]


def open_drafts(owner, provider, count: int) -> list:
    drafts = []
    for _ in range(count):
        _, payment_hash = invoice_secret()
        provider.add(payment_hash)
        drafts.append(ln_draft(owner, payment_hash))
    return drafts


@pytest.mark.parametrize("node", ["lnd", "lnbits"])
def test_a_node_pass_costs_the_same_for_5_and_200_open_drafts(owner, provider, settings, node):
    if node == "lnd":
        settings.LND_REST_URL, settings.LND_MACAROON_HEX = provider.server.url, "0201abcd"
    else:
        settings.LNBITS_URL, settings.LNBITS_API_KEY = provider.server.url, "invoice-key"

    def cost(count: int) -> list[str]:
        preimage, payment_hash = invoice_secret()
        paid = ln_draft(owner, payment_hash)
        open_drafts(owner, provider, count - 1)
        watch()
        provider.settle(payment_hash, preimage)
        before = len(provider.server.requests)
        watch()
        paid.refresh_from_db()
        assert paid.status == DraftStatus.CONFIRMED
        return node_requests(provider, before)

    few, many = cost(5), cost(200)
    # LNbits: its page, then an empty one (a short page is not trusted to be the last).
    assert len(few) == len(many) == (1 if node == "lnd" else 2), (few, many)


def test_lnd_pages_by_add_index_until_it_reads_a_settlement_then_follows_the_settle_index(owner, provider, settings):
    settings.LND_REST_URL, settings.LND_MACAROON_HEX = provider.server.url, "0201abcd"
    settings.CHAINWATCH_LND_INVOICES_PER_CALL = 3
    settings.CHAINWATCH_LND_RELIST_SECONDS = 0
    for _ in range(9):  # an earlier day's invoices, all paid
        preimage, payment_hash = invoice_secret()
        provider.settle(payment_hash, preimage)
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash)
    provider.add(payment_hash)  # the 10th invoice, still open
    # A cursor written by add_index paging: just before the oldest open invoice.
    cursor = Cursor.objects.create(network=Network.MAINNET, family="lightning", backend="lightning", position="9")
    open_drafts(owner, provider, 2)  # invoices 11 and 12
    before = len(provider.server.requests)
    watch()
    assert node_requests(provider, before) == [  # invoices 10-12, then an empty page: nothing before 10
        "/v1/invoices?index_offset=9&num_max_invoices=3",
        "/v1/invoices?index_offset=12&num_max_invoices=3",
    ]
    cursor.refresh_from_db()
    assert cursor.position == "9"  # nothing read was settled: invoice 10 is the oldest open one

    provider.settle(payment_hash, preimage)  # the node's 10th settlement
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    cursor.refresh_from_db()
    assert cursor.position == "settle:10"  # every invoice still open settles above it

    later_preimage, later_hash = invoice_secret()
    later = ln_draft(owner, later_hash)
    provider.settle(later_hash, later_preimage)
    before = len(provider.server.requests)
    watch()
    assert node_requests(provider, before) == ["/v1/invoices/subscribe?settle_index=10"]
    later.refresh_from_db()
    assert later.status == DraftStatus.CONFIRMED
    cursor.refresh_from_db()
    assert cursor.position == "settle:11"


def test_lnd_reads_recent_settlements_again_so_a_draft_made_just_after_a_pass_is_still_paid(owner, provider, settings):
    settings.LND_REST_URL, settings.LND_MACAROON_HEX = provider.server.url, "0201abcd"
    earlier_preimage, earlier_hash = invoice_secret()
    provider.settle(earlier_hash, earlier_preimage)
    provider.settled_at[earlier_hash] -= timedelta(hours=1)
    watch()  # reads the earlier settlement: from here on by settle_index
    assert Cursor.objects.get(network=Network.MAINNET, family="lightning").position == "settle:1"

    preimage, payment_hash = invoice_secret()
    provider.settle(payment_hash, preimage)  # paid while the draft's row was not yet committed
    watch()
    draft = ln_draft(owner, payment_hash)
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert Cursor.objects.get(network=Network.MAINNET, family="lightning").position == "settle:1"


def test_lnbits_reads_back_only_to_the_last_pass(owner, provider, settings):
    settings.LNBITS_URL, settings.LNBITS_API_KEY = provider.server.url, "invoice-key"
    settings.CHAINWATCH_LNBITS_PAYMENTS_PER_CALL = 2
    settings.CHAINWATCH_LNBITS_RELIST_SECONDS = 0
    for n in range(9):  # settled before the drafts below existed, the newest an hour ago
        preimage, payment_hash = invoice_secret()
        provider.settle(payment_hash, preimage)
        provider.settled_at[payment_hash] -= timedelta(hours=1 + n)
    watch()
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash)
    provider.settle(payment_hash, preimage)
    before = len(provider.server.requests)
    watch()
    # Ten settled payments, two a page: the pass stops at the page reaching past the last pass's
    # newest (which is read again), not after five pages.
    assert len(node_requests(provider, before)) == 2
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED


def test_lnbits_pages_past_a_page_its_server_cut_at_1000_without_saying(owner, provider, settings):
    settings.LNBITS_URL, settings.LNBITS_API_KEY = provider.server.url, "invoice-key"
    settings.CHAINWATCH_LNBITS_PAYMENTS_PER_CALL = 2000  # more than LNbits gives a page
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash)
    provider.settle(payment_hash, preimage)  # then 1,500 newer payments above it
    for _ in range(1500):
        other_preimage, other_hash = invoice_secret()
        provider.settle(other_hash, other_preimage)
    before = len(provider.server.requests)

    watch()

    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    limits = [int(parse_qs(urlsplit(path).query)["limit"][0]) for path in node_requests(provider, before)]
    assert limits == [1000, 1000, 1000]  # the cap asked for; pages of 1000, 501, then an empty one


def test_lnbits_stops_when_its_server_answers_the_same_page_again(owner, provider, settings):
    settings.LNBITS_URL, settings.LNBITS_API_KEY = provider.server.url, "invoice-key"
    settings.CHAINWATCH_LNBITS_PAYMENTS_PER_CALL = 2
    provider.lnbits_ignores_offset = True
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash)
    provider.settle(payment_hash, preimage)
    for _ in range(3):
        other_preimage, other_hash = invoice_secret()
        provider.settle(other_hash, other_preimage)
    before = len(provider.server.requests)

    watch()

    # The second page brings nothing new: the pass ends there rather than asking forever.
    assert len(node_requests(provider, before)) == 2
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING  # never listed by this broken server


def test_lud21_verify_urls_are_asked_within_a_budget_per_pass_longest_unchecked_first(owner, provider, settings):
    settings.CHAINWATCH_LUD21_CHECKS_PER_PASS = 10
    drafts = []
    for _ in range(30):
        preimage, payment_hash = invoice_secret()
        drafts.append(
            (ln_draft(owner, payment_hash, lnurl_verify_url=f"{provider.server.url}/verify/{payment_hash}"), preimage)
        )
    last, preimage = drafts[-1]
    provider.settle(last.payment_hash, preimage)
    asked: list[str] = []
    for _ in range(3):
        before = len(provider.server.requests)
        watch()
        asked += node_requests(provider, before)
        assert len(node_requests(provider, before)) == 10
    assert sorted(asked) == sorted(f"/verify/{d.payment_hash}" for d, _ in drafts)  # each once in three passes
    last.refresh_from_db()
    assert last.status == DraftStatus.CONFIRMED


def test_an_lnd_stream_refused_by_the_node_is_recorded_on_the_cursor(owner, provider, settings):
    settings.LND_REST_URL, settings.LND_MACAROON_HEX = provider.server.url, "0201dead"  # a wrong macaroon
    Cursor.objects.create(network=Network.MAINNET, family="lightning", backend="lightning", position="settle:4")
    watcher_run(Network.MAINNET, "lightning")
    cursor = Cursor.objects.get(network=Network.MAINNET, family="lightning")
    assert "401" in cursor.last_error and cursor.position == "settle:4"

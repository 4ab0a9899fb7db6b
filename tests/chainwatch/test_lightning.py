"""Lightning settlement through LUD-21 verify URLs, LND REST and LNbits (local servers)."""

from __future__ import annotations

import base64
import copy
import hashlib
import os

import pytest

from chainwatch.models import Cursor
from chainwatch.tasks import watcher_run
from payments.enums import Currency, DraftStatus, FeePlacement, Method, Network
from tests.chainwatch.conftest import load_fixture
from tests.factories import make_draft
from webhooks.models import Event

pytestmark = pytest.mark.django_db
SHAPES = load_fixture("lightning.json")


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


class Provider:
    """LUD-21 verify endpoint, LND REST and LNbits in one local server."""

    def __init__(self) -> None:
        self.settled: dict[str, str] = {}  # payment hash -> preimage hex the node reports

    def handler(self, method, path, body, headers):
        if path.startswith("/verify/"):
            payment_hash = path.rsplit("/", 1)[1]
            if payment_hash not in self.settled:
                return 200, SHAPES["lud21_open"]
            return 200, dict(SHAPES["lud21_settled"], preimage=self.settled[payment_hash])
        if path.startswith("/v1/invoice/"):
            if headers.get("Grpc-Metadata-macaroon") != "0201abcd":
                return 401, {"code": 16, "message": "expected 1 macaroon, got 0"}
            payment_hash = path.rsplit("/", 1)[1]
            invoice = copy.deepcopy(SHAPES["lnd_invoice"])
            invoice["r_hash"] = base64.b64encode(bytes.fromhex(payment_hash)).decode()
            if payment_hash not in self.settled:
                invoice.update(state="OPEN", settled=False, amt_paid_sat="0", amt_paid_msat="0")
            else:
                invoice["r_preimage"] = base64.b64encode(bytes.fromhex(self.settled[payment_hash])).decode()
            return 200, invoice
        if path.startswith("/api/v1/payments/"):
            if headers.get("X-Api-Key") != "invoice-key":
                return 401, {"detail": "Invalid key"}
            payment_hash = path.rsplit("/", 1)[1]
            if payment_hash not in self.settled:
                return 200, {"paid": False, "preimage": None, "details": None}
            payment = copy.deepcopy(SHAPES["lnbits_payment"])
            payment["preimage"] = self.settled[payment_hash]
            payment["details"].update(payment_hash=payment_hash, preimage=self.settled[payment_hash])
            return 200, payment
        return 404, {"detail": "Not Found"}


@pytest.fixture
def provider(fake_server, settings):
    node = Provider()
    node.server = fake_server(node.handler)
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    settings.LND_REST_URL = settings.LNBITS_URL = ""
    settings.OUTBOUND_ALLOW_LOOPBACK = True  # the verify URL is on 127.0.0.1
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

    provider.settled[payment_hash] = preimage
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_tx_id == payment_hash
    assert events_of(draft) == ["draft.seen", "draft.confirmed"]


def test_a_settlement_whose_preimage_does_not_hash_to_the_payment_hash_is_ignored(owner, provider):
    _, payment_hash = invoice_secret()
    wrong_preimage, _ = invoice_secret()
    draft = ln_draft(owner, payment_hash, lnurl_verify_url=f"{provider.server.url}/verify/{payment_hash}")
    provider.settled[payment_hash] = wrong_preimage
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING and events_of(draft) == []


def test_lnd_rest_reports_the_settlement_with_a_base64_preimage(owner, provider, settings):
    settings.LND_REST_URL = provider.server.url
    settings.LND_MACAROON_HEX = "0201abcd"
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash)
    provider.settled[payment_hash] = preimage
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED


def test_lnbits_reports_the_settlement_with_the_api_key(owner, provider, settings):
    settings.LNBITS_URL = provider.server.url
    settings.LNBITS_API_KEY = "invoice-key"
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash)
    provider.settled[payment_hash] = preimage
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED


def test_watching_a_settled_invoice_again_confirms_it_only_once(owner, provider):
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash, lnurl_verify_url=f"{provider.server.url}/verify/{payment_hash}")
    provider.settled[payment_hash] = preimage
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
    provider.settled[payment_hash] = preimage
    watch()
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and draft.paid_late is True


def test_a_verify_url_that_now_resolves_to_a_private_address_is_not_fetched(owner, provider, settings, fake_dns):
    # The receiver's LNURL server handed out the verify URL; its DNS can change afterwards.
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    fake_dns.answers["verify.example.com"] = ["10.0.0.8"]
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash, lnurl_verify_url=f"https://verify.example.com/verify/{payment_hash}")
    provider.settled[payment_hash] = preimage

    watcher_run(Network.MAINNET, "lightning")

    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING
    assert fake_dns.calls == ["verify.example.com"]


def test_a_loopback_verify_url_is_not_fetched_without_the_loopback_setting(owner, provider, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    preimage, payment_hash = invoice_secret()
    draft = ln_draft(owner, payment_hash, lnurl_verify_url=f"{provider.server.url}/verify/{payment_hash}")
    provider.settled[payment_hash] = preimage

    watcher_run(Network.MAINNET, "lightning")

    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING
    assert provider.server.requests == []

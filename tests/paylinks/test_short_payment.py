"""A short payment can be completed: the pay page says what arrived and what is missing, offers
a payment URI for exactly the rest, keeps the receipt email field and says what the merchant can
do; the rest, sent to the same address, pays the draft as a split of it (chainwatch.matching)."""

from __future__ import annotations

import re
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from chainwatch.matching import match_network
from chainwatch.models import ObservedTransfer, UnmatchedTransfer
from drafts.enums import DraftStatus
from drafts.models import Draft
from payments.enums import Currency, Network
from tests.drafts.conftest import ADDRESSES

pytestmark = pytest.mark.django_db
TX_SHORT = "a1" * 32
TX_REST = "b2" * 32


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("\u00a0", " ")


def btc_transfer(amount: int, *, txid: str, block: int = 100) -> ObservedTransfer:
    return ObservedTransfer.objects.create(
        network=Network.MAINNET,
        txid=txid,
        index=0,
        currency=Currency.BTC,
        token_address="",
        receiver_address=ADDRESSES["Mainnet"],
        amount_base_units=amount,
        block_height=block,
        block_hash=f"{block:064x}",
    )


@pytest.fixture
def short_btc(create_link, select):
    """A fiat-priced link paid in Bitcoin with 5% less than its amount, seen by the watcher."""
    link = create_link()
    chosen = select(link["token"], currency="BTC", network="Mainnet").json()
    draft = Draft.objects.get(pk=chosen["draftId"])
    received = draft.amount_base_units * 95 // 100
    btc_transfer(received, txid=TX_SHORT)
    match_network(network=Network.MAINNET, head=100)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.AMOUNT_MISMATCH and draft.received_base_units == received
    return link, draft


def test_the_page_of_a_short_bitcoin_payment_says_what_is_missing_and_how_to_send_it(short_btc):
    link, draft = short_btc
    rest = draft.amount_base_units - draft.received_base_units

    html = Client().get(f"/pay/{link['token']}").content.decode()

    text = text_of(html)
    assert f"Received {Decimal(draft.received_base_units).scaleb(-8):.8f} BTC" in text
    assert f"Missing {Decimal(rest).scaleb(-8):.8f} BTC" in text
    missing_eur = (Decimal(rest).scaleb(-8) * draft.rate).quantize(Decimal("0.01"))
    assert f"€{missing_eur}" in text  # the fiat of a fiat-priced draft
    assert "Send the missing amount to complete this payment" in text
    uri = re.search(r'href="(bitcoin:[^"]+)" id="pay-rest"', html).group(1)
    parts = urlsplit(uri.replace("&amp;", "&"))
    assert parts.path == ADDRESSES["Mainnet"]
    assert Decimal(parse_qs(parts.query)["amount"][0]) == Decimal(rest).scaleb(-8)
    assert "<svg" in html  # the QR code of that URI
    assert 'name="email"' in html  # the receipt email field stays
    assert "can also accept the amount received as payment in full, or refund it" in text
    assert "Do not send another payment" not in text


def test_sending_exactly_the_rest_completes_the_draft_as_a_split(short_btc):
    link, draft = short_btc
    rest = draft.amount_base_units - draft.received_base_units

    btc_transfer(rest, txid=TX_REST, block=101)
    match_network(network=Network.MAINNET, head=101)

    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.paid_tx_ids == [TX_SHORT, TX_REST]
    assert draft.received_base_units == draft.amount_base_units and draft.amount_mismatch is None
    match_network(network=Network.MAINNET, head=110)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    assert set(ObservedTransfer.objects.values_list("draft_id", flat=True)) == {draft.id}
    assert not UnmatchedTransfer.objects.exists()
    text = text_of(Client().get(f"/pay/{link['token']}").content.decode())
    assert "Payment confirmed" in text


def test_a_rest_of_another_amount_does_not_complete_it(short_btc):
    _link, draft = short_btc
    rest = draft.amount_base_units - draft.received_base_units

    btc_transfer(rest - 1, txid=TX_REST, block=101)
    match_network(network=Network.MAINNET, head=110)

    draft.refresh_from_db()
    assert draft.status == DraftStatus.AMOUNT_MISMATCH and draft.paid_tx_ids == [TX_SHORT]


def test_after_the_draft_expired_the_page_offers_no_rest_and_says_not_to_pay(short_btc, time_machine):
    link, draft = short_btc
    time_machine.move_to(draft.expires_at, tick=False)

    html = Client().get(f"/pay/{link['token']}").content.decode()

    assert 'id="pay-rest"' not in html and "Do not send another payment" in text_of(html)
    assert 'id="missing"' in html

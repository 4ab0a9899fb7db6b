"""Drafts at a receiving wallet's fresh address are matched by that address."""

from __future__ import annotations

import uuid

import pytest

from chainwatch.matching import match_network
from chainwatch.models import ObservedTransfer
from drafts.enums import DraftStatus
from payments.enums import Currency, Method, Network
from tests.factories import make_draft

pytestmark = pytest.mark.django_db
ADDRESS = "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl"  # BIP84 test vector, testnet m/84'/1'/0'/0/0


def wallet_draft(user, **fields):
    return make_draft(
        user,
        network=Network.TESTNET,
        currency=Currency.BTC,
        method=Method.SINGLE_OUTPUT,
        receiver_address=ADDRESS,
        amount_base_units=100_000,
        required_confirmations=1,
        receiving_wallet_id=uuid.uuid4(),
        derivation_index=0,
        **fields,
    )


def pay(amount: int, txid: str = "aa" * 32):
    return ObservedTransfer.objects.create(
        network=Network.TESTNET,
        txid=txid,
        index=0,
        currency=Currency.BTC,
        token_address="",
        receiver_address=ADDRESS,
        amount_base_units=amount,
        block_height=100,
        block_hash="00" * 32,
    )


@pytest.mark.parametrize(
    ("amount", "status"),
    [(100_000, DraftStatus.CONFIRMED), (95_000, DraftStatus.AMOUNT_MISMATCH), (105_000, DraftStatus.AMOUNT_MISMATCH)],
)
def test_exact_short_and_over_payments_to_the_fresh_address(owner, amount, status):
    draft = wallet_draft(owner)
    pay(amount)
    match_network(network=Network.TESTNET, head=100)
    draft.refresh_from_db()
    assert draft.status == status and draft.received_base_units == amount


def test_another_accounts_draft_naming_the_same_address_does_not_take_or_block_the_payment(owner, other_account):
    stranger = make_draft(
        other_account,
        network=Network.TESTNET,
        currency=Currency.BTC,
        method=Method.SINGLE_OUTPUT,
        receiver_address=ADDRESS,
        amount_base_units=100_000,
        required_confirmations=1,
    )
    draft = wallet_draft(owner)
    pay(100_000)
    match_network(network=Network.TESTNET, head=100)
    draft.refresh_from_db()
    stranger.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and stranger.status == DraftStatus.PENDING

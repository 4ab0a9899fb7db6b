"""Matching stored transfers to drafts, without any chain: rows in, state-machine calls out."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chainwatch.evm import wei_to_gwei
from chainwatch.matching import match_network
from chainwatch.models import ObservedTransfer
from chainwatch.networks import token_address
from core.env import network_env_suffix
from drafts.enums import DraftStatus
from payments.enums import Currency, Network
from tests.factories import make_draft

pytestmark = pytest.mark.django_db
RECEIVER = "0x52908400098527886E0F7030069857D2E4169EE7"
USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"


def transfer(amount: int, *, txid: str = "0x01", index: int = 0, block: int | None = 100, **fields):
    defaults = {
        "network": Network.ETHEREUM,
        "txid": txid,
        "index": index,
        "currency": Currency.USDC,
        "token_address": USDC,
        "receiver_address": RECEIVER.lower(),
        "amount_base_units": amount,
        "block_height": block,
        "block_hash": "0xblock" if block else "",
    }
    return ObservedTransfer.objects.create(**{**defaults, **fields})


def test_a_near_amount_that_fits_two_drafts_is_not_guessed_onto_the_closest(owner):
    far = make_draft(owner, amount_base_units=10_000_000)
    near = make_draft(owner, amount_base_units=10_500_000)
    transfer(10_600_000)  # within 10% of both: whose payment it is cannot be told
    match_network(network=Network.ETHEREUM, head=100)
    far.refresh_from_db()
    near.refresh_from_db()
    assert near.status == DraftStatus.PENDING and far.status == DraftStatus.PENDING

    alone = make_draft(owner, amount_base_units=30_000_000)
    transfer(31_000_000, txid="0xalone")  # within 10% of one draft only: its AmountMismatch
    match_network(network=Network.ETHEREUM, head=100)
    alone.refresh_from_db()
    assert alone.status == DraftStatus.AMOUNT_MISMATCH


def test_a_transfer_seen_before_the_draft_existed_does_not_pay_it(owner):
    transfer(25_000_000)
    draft = make_draft(owner, created_at=timezone.now() + timedelta(seconds=1))
    match_network(network=Network.ETHEREUM, head=100)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PENDING


def test_the_draft_and_the_fee_flag_are_recorded_on_the_paying_transfer(owner):
    draft = make_draft(owner, required_confirmations=1)
    row = transfer(25_000_000)
    match_network(network=Network.ETHEREUM, head=100)
    row.refresh_from_db()
    assert row.draft_id == draft.id and row.confirmations == 1
    assert row.fee_output_present is None  # SingleOutput: no fee output to look for


def test_a_second_transfer_of_the_same_amount_does_not_take_over_a_paid_draft(owner):
    draft = make_draft(owner, required_confirmations=3)
    transfer(25_000_000, txid="0x01")
    match_network(network=Network.ETHEREUM, head=100)
    transfer(25_000_000, txid="0x02")
    match_network(network=Network.ETHEREUM, head=101)
    draft.refresh_from_db()
    assert draft.paid_tx_id == "0x01" and draft.confirmations == 2
    assert ObservedTransfer.objects.get(txid="0x02").draft_id is None


def test_a_mempool_transfer_makes_the_draft_seen_with_no_confirmations(owner):
    draft = make_draft(owner, required_confirmations=1)
    transfer(25_000_000, block=None)
    match_network(network=Network.ETHEREUM, head=100)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.SEEN and draft.confirmations == 0


def test_wei_converts_to_gwei_exactly_or_says_it_did_not():
    assert wei_to_gwei(1_500_000_000_000_000_000) == (1_500_000_000, True)
    assert wei_to_gwei(1_500_000_000_000_000_001) == (1_500_000_000, False)


def test_token_addresses_can_be_overridden_per_network(settings):
    settings.TOKEN_ADDRESSES = {"USDT": {"Sepolia": "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"}}
    assert token_address("Sepolia", "USDT") == "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
    assert token_address("Ethereum", "USDC") == USDC


def test_network_names_map_to_setting_suffixes():
    assert [network_env_suffix(n) for n in ("Mainnet", "BaseSepolia", "SolanaDevnet")] == [
        "MAINNET",
        "BASE_SEPOLIA",
        "SOLANA_DEVNET",
    ]


@pytest.mark.django_db(transaction=True)
def test_a_pass_that_dies_after_the_door_leaves_the_draft_as_it_was_and_the_next_pass_confirms_it(owner):
    """The draft's transition and the transfer's link to it are one transaction: a pass that
    fails between them (here the database refuses the link) leaves the draft Pending, and the
    next pass takes the transfer again and confirms it. A draft left Seen with its transfer
    unlinked would stay Seen: the transfer then looks like a repeat of the draft's payment."""
    from django.db import connection

    draft = make_draft(owner, required_confirmations=2)
    row = transfer(25_000_000, block=100)
    with connection.cursor() as cursor:  # the link's UPDATE fails, as a process killed there would
        cursor.execute(
            "CREATE FUNCTION refuse_link() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'the pass dies here'; END $$"
        )
        cursor.execute(
            "CREATE TRIGGER refuse_link BEFORE UPDATE OF draft_id ON chainwatch_observedtransfer "
            "FOR EACH ROW WHEN (NEW.draft_id IS NOT NULL) EXECUTE FUNCTION refuse_link()"
        )
    try:
        with pytest.raises(Exception, match="the pass dies here"):
            match_network(network=Network.ETHEREUM, head=100)
        draft.refresh_from_db()
        assert draft.status == DraftStatus.PENDING and draft.paid_tx_id is None
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER refuse_link ON chainwatch_observedtransfer")
            cursor.execute("DROP FUNCTION refuse_link()")

    match_network(network=Network.ETHEREUM, head=101)
    draft.refresh_from_db()
    row.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED and row.draft_id == draft.id

"""Payments that cannot be confused, on a real EVM chain (anvil), the cases issue #43 found with
Bitcoin software, run here with real transactions and the watcher's beat task: a repeated
payment of a paid draft never pays the next draft of that price at the address, a near amount
is reported and never guessed onto another draft, a short payment is completed by exactly the
rest, and a payer's checkout status never shows another payer's transfer to the shared address."""

from __future__ import annotations

import pytest

from tests.scenarios.conftest import assert_nothing_counted_twice, events_of, two_payers_at, unmatched_events

pytestmark = pytest.mark.django_db


def fiat_draft(chain, receiver: str, price: float = 12.34) -> dict:
    """A draft priced in fiat, as a shop bills the same price to many customers at one address."""
    return chain.draft(receiver=receiver, fiatCurrency="USD", fiatAmount=price, requiredConfirmations=2)


def test_a_repeated_payment_of_a_paid_draft_is_reported_on_it_and_never_pays_the_next_draft_of_that_price(chain):
    shop = chain.new_address()
    first = fiat_draft(chain, shop)
    paid = chain.pay(first, first["amountSats"])
    chain.settle()
    assert chain.status(first)["status"] == "Confirmed"
    following = fiat_draft(chain, shop)  # the next customer, the same price, the same address
    assert following["amountSats"] != first["amountSats"]  # the paid draft keeps its exact amount

    again = chain.pay(first, first["amountSats"])  # the first customer's wallet pays again
    chain.tick()
    assert chain.status(following)["status"] == "Pending"
    chain.settle()
    assert chain.status(following)["status"] == "Pending" and chain.status(following)["txId"] is None
    assert chain.status(first)["txIds"] == [paid]
    (item,) = chain.transfers(matched=False)
    assert item["txId"] == again and first["id"] in item["candidateDraftIds"]
    assert events_of(first) == ["draft.created", "draft.seen", "draft.confirmed", "draft.paid_again"]
    assert events_of(following) == ["draft.created"]
    assert [e["txId"] for e in unmatched_events()] == [again]
    assert_nothing_counted_twice(chain.network)


def test_a_near_amount_is_reported_and_never_turns_another_draft_amount_mismatch(ethereum_chain):
    chain = ethereum_chain
    shop = chain.new_address()
    first = fiat_draft(chain, shop)
    chain.pay(first, first["amountSats"])
    chain.settle()
    following = fiat_draft(chain, shop)
    near = first["amountSats"] * 97 // 100  # 3% short of both: the first payer's, or the second's?
    tx = chain.pay(shop, near)
    chain.settle()

    body = chain.get(following)
    assert body["status"] == "Pending" and body.get("amountMismatch") is None
    assert events_of(following) == ["draft.created"]
    (item,) = chain.transfers(matched=False)
    assert item["txId"] == tx and item["amountSats"] == near
    assert {first["id"], following["id"]} <= set(item["candidateDraftIds"])
    assert events_of(first) == ["draft.created", "draft.seen", "draft.confirmed"]  # not its exact amount
    assert_nothing_counted_twice(chain.network)


def test_a_short_payment_is_completed_by_exactly_the_rest_as_a_split_of_the_same_draft(ethereum_chain):
    chain = ethereum_chain
    draft = chain.draft(amountSats=25_000_000)
    short = chain.pay(draft, 24_000_000)
    chain.settle()
    body = chain.get(draft)
    assert body["status"] == "AmountMismatch" and body["amountMismatch"]["differenceBaseUnits"] == -1_000_000

    not_quite = chain.pay(draft, 999_999)  # not the rest: the merchant's to look at
    rest = chain.pay(draft, 1_000_000)
    chain.settle()
    body = chain.get(draft)
    assert body["status"] == "Confirmed" and body["paidTxIds"] == [short, rest]
    assert body.get("amountMismatch") is None
    assert [t["txId"] for t in chain.transfers(matched=False)] == [not_quite]
    assert events_of(draft) == ["draft.created", "draft.amount_mismatch", "draft.seen", "draft.confirmed"]
    assert_nothing_counted_twice(chain.network)


def test_a_payers_checkout_status_shows_only_their_own_transfer_never_one_to_the_shared_address(ethereum_chain):
    chain = ethereum_chain
    shop = chain.new_address()
    payer, tokens, drafts = two_payers_at(
        chain.api, currency="USDC", network=chain.network, receiver=shop, orders=("A-1", "A-2")
    )
    stranger = chain.pay(shop, 20_000_000)  # pays nothing: someone else's transfer to the address
    mine = chain.pay(shop, drafts[0]["amountSats"])
    chain.settle()

    (item,) = chain.transfers(matched=False)
    assert item["txId"] == stranger  # the merchant's business
    first = payer.get(f"/api/v1/checkout/{tokens[0]}/status").json()
    second = payer.get(f"/api/v1/checkout/{tokens[1]}/status").json()
    assert first["paidTxId"] == mine and stranger not in str(first)
    assert second["paidTxId"] is None and stranger not in str(second) and mine not in str(second)
    page = payer.get(f"/pay/{tokens[1]}").content.decode()
    assert stranger not in page and mine not in page and "20.000000" not in page

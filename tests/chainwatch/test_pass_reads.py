"""What a watcher pass reads from the database does not grow with the drafts billed at one
address (issue 46): the scanners ask the node about each receiving address once, and a
transfer found is matched to its draft by a look-up of its address and amount."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from chainwatch.matching import find_draft
from chainwatch.models import Cursor, ObservedTransfer
from chainwatch.tasks import watcher_run
from drafts.enums import DraftStatus
from drafts.models import Draft
from payments.enums import Currency, FeePlacement, Method, Network
from tests.chainwatch.test_lightning import invoice_secret, ln_draft, provider  # noqa: F401 (a fixture)
from tests.factories import make_draft

pytestmark = pytest.mark.django_db

MORE = 40  # drafts added at the same address between the two measured passes
BTC_RECEIVER = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
SOL_RECEIVER = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"


def draft_rows_read(network: str, family: str) -> int:
    """Rows of the drafts table the watcher's passes read (as the database returned them)."""
    rows = 0
    table = connection.ops.quote_name(Draft._meta.db_table)

    def counting(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        nonlocal rows
        result = execute(sql, params, many, context)
        if sql.lstrip().upper().startswith("SELECT") and table in sql:
            rows += max(context["cursor"].rowcount, 0)
        return result

    with connection.execute_wrapper(counting):
        watcher_run(network, family)
    cursor = Cursor.objects.get(network=network, family=family)
    assert cursor.last_error == "", cursor.last_error
    return rows


def drafts_at_one_address(owner, step: int, **defaults: Any) -> Callable[..., Draft]:
    """The n-th draft at one address: its amount `step` above the one before (and on Solana
    its own reference)."""

    def draft(n: int, **fields: Any) -> Draft:
        amount = defaults["amount_base_units"] + step * n
        reference = {"solana_reference": f"Ref{n:040d}"} if defaults["network"] == Network.SOLANA else {}
        return make_draft(owner, **{**defaults, **reference, "amount_base_units": amount, **fields})

    return draft


def only_the_chosen_is_paid(opened: list[Draft], chosen: Draft) -> None:
    paid = {d.pk for d in Draft.objects.filter(pk__in=[d.pk for d in opened]).exclude(status=DraftStatus.PENDING)}
    assert paid == {chosen.pk}


def the_same_with_more_drafts_at_one_address(
    network: str, family: str, draft: Callable[..., Draft], new_block: Callable[[], None]
) -> list[Draft]:
    """One draft at the address, a pass measured; MORE open drafts there and the drafts a pass
    still follows (late-payable, holding their amount, confirmed but not final), a pass measured:
    both read as many draft rows. Returns the open drafts."""
    watcher_run(network, family)  # the cursor starts
    first = draft(0)
    new_block()
    one = draft_rows_read(network, family)

    now = timezone.now()
    opened = [first] + [draft(n) for n in range(1, MORE + 1)]
    draft(MORE + 1, status=DraftStatus.EXPIRED, expires_at=now - timedelta(minutes=5))
    draft(MORE + 2, status=DraftStatus.CANCELLED, amount_held_until=now + timedelta(days=5))
    draft(MORE + 3, status=DraftStatus.CONFIRMED, confirmed_at=now, paid_tx_id="ab" * 32)
    new_block()
    many = draft_rows_read(network, family)

    assert many == one, f"a pass read {one} draft rows with one draft at the address, {many} with {MORE + 4}"
    return opened


def test_a_bitcoin_pass_reads_as_many_draft_rows_for_forty_drafts_at_an_address_as_for_one(owner, bitcoin):
    btc_draft = drafts_at_one_address(
        owner,
        1_000,
        network=Network.MAINNET,
        currency=Currency.BTC,
        method=Method.SINGLE_OUTPUT,
        receiver_address=BTC_RECEIVER,
        amount_base_units=250_000,
        fee_placement=FeePlacement.ACCRUED,
        required_confirmations=1,
    )
    opened = the_same_with_more_drafts_at_one_address(Network.MAINNET, "bitcoin", btc_draft, lambda: bitcoin.mine(1))

    chosen = opened[MORE // 2]
    bitcoin.pay((BTC_RECEIVER, chosen.amount_base_units))
    bitcoin.mine(1)
    watcher_run(Network.MAINNET, "bitcoin")
    only_the_chosen_is_paid(opened, chosen)
    chosen.refresh_from_db()
    assert chosen.status == DraftStatus.CONFIRMED


def test_an_evm_pass_reads_as_many_draft_rows_for_forty_drafts_at_an_address_as_for_one(owner, ethereum):
    receiver = ethereum.new_address()

    usdc_draft = drafts_at_one_address(
        owner,
        1_000,
        network=Network.ETHEREUM,
        currency=Currency.USDC,
        receiver_address=receiver,
        amount_base_units=25_000_000,
        required_confirmations=1,
    )
    opened = the_same_with_more_drafts_at_one_address(Network.ETHEREUM, "evm", usdc_draft, lambda: ethereum.mine(1))

    chosen = opened[MORE // 2]
    ethereum.pay_token(ethereum.token, receiver, chosen.amount_base_units)
    watcher_run(Network.ETHEREUM, "evm")
    only_the_chosen_is_paid(opened, chosen)
    chosen.refresh_from_db()
    assert chosen.status == DraftStatus.CONFIRMED


def test_a_solana_pass_reads_as_many_draft_rows_for_forty_drafts_at_an_address_as_for_one(owner, solana):
    sol_draft = drafts_at_one_address(
        owner,
        1,
        network=Network.SOLANA,
        currency=Currency.SOL,
        receiver_address=SOL_RECEIVER,
        amount_base_units=1_500_000_000,
        required_confirmations=1,
    )

    def new_slots() -> None:
        solana.slot += 10

    opened = the_same_with_more_drafts_at_one_address(Network.SOLANA, "solana", sol_draft, new_slots)

    chosen = opened[MORE // 2]
    solana.pay_sol(reference=chosen.solana_reference, receiver=SOL_RECEIVER, lamports=chosen.amount_base_units)
    new_slots()
    watcher_run(Network.SOLANA, "solana")
    only_the_chosen_is_paid(opened, chosen)


def test_a_lightning_pass_reads_the_invoices_alone_not_the_on_chain_drafts_of_its_network(owner, provider):  # noqa: F811
    preimage, payment_hash = invoice_secret()
    invoice = ln_draft(owner, payment_hash, lnurl_verify_url=f"{provider.server.url}/verify/{payment_hash}")
    alone = draft_rows_read(Network.MAINNET, "lightning")
    for n in range(MORE):
        make_draft(
            owner,
            network=Network.MAINNET,
            currency=Currency.BTC,
            receiver_address=BTC_RECEIVER,
            amount_base_units=250_000 + n,
            fee_placement=FeePlacement.ACCRUED,
            required_confirmations=1,
        )
    beside = draft_rows_read(Network.MAINNET, "lightning")
    assert beside == alone, f"{alone} draft rows with the invoice alone, {beside} beside {MORE} on-chain drafts"

    provider.settle(payment_hash, preimage)
    watcher_run(Network.MAINNET, "lightning")
    invoice.refresh_from_db()
    assert invoice.status == DraftStatus.CONFIRMED


def test_matching_a_payment_reads_the_drafts_near_its_amount_not_every_draft_at_its_address(owner, bitcoin):
    def btc_draft(amount: int) -> Draft:
        return make_draft(
            owner,
            network=Network.MAINNET,
            currency=Currency.BTC,
            receiver_address=BTC_RECEIVER,
            amount_base_units=amount,
            fee_placement=FeePlacement.ACCRUED,
            required_confirmations=1,
        )

    watcher_run(Network.MAINNET, "bitcoin")
    chosen = btc_draft(250_000)
    far = [btc_draft(1_000_000 + 10_000 * n) for n in range(MORE)]  # none within 10% of the payment
    bitcoin.pay((BTC_RECEIVER, 250_000))
    bitcoin.mine(1)

    rows = draft_rows_read(Network.MAINNET, "bitcoin")

    chosen.refresh_from_db()
    assert chosen.status == DraftStatus.CONFIRMED
    assert not Draft.objects.filter(pk__in=[d.pk for d in far]).exclude(status=DraftStatus.PENDING).exists()
    assert rows < MORE, f"the paying pass read {rows} draft rows for {MORE + 1} drafts at the address"


def test_a_transfers_drafts_are_looked_up_on_the_open_amounts_index_not_by_a_scan(owner):
    """Every other open draft of the network stands beside the address's own, as on a running
    service: a case-blind comparison (UPPER of every row) would read them all for each transfer."""
    receiver = "0x52908400098527886E0F7030069857D2E4169EE7"
    template = make_draft(owner, receiver_address=receiver, amount_base_units=25_000_000)
    fields = {f.attname: getattr(template, f.attname) for f in Draft._meta.concrete_fields if not f.primary_key}
    Draft.objects.bulk_create(
        Draft(**{**fields, "receiver_address": f"0x{n:040x}", "amount_base_units": 25_000_000 + n})
        for n in range(1, 800)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE drafts_draft")
    paid = ObservedTransfer.objects.create(
        network=Network.ETHEREUM,
        txid="0x01",
        index=0,
        currency=Currency.USDC,
        token_address="0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        receiver_address=receiver.lower(),  # as a node may spell it: still the draft's address
        amount_base_units=25_000_000,
        block_height=100,
        block_hash="0xblock",
    )

    with CaptureQueriesContext(connection) as queries:
        assert find_draft(paid, now=timezone.now()) == template
    # The payable drafts near the amount, then the drafts there that hold it (paid or closed).
    look_ups = [q["sql"] for q in queries.captured_queries if "BETWEEN" in q["sql"] and "drafts_draft" in q["sql"]]
    assert len(look_ups) == 2, look_ups
    payable, holders = (list(_plan_nodes(_plan(look_up))) for look_up in look_ups)
    assert any(n.get("Index Name") == "draft_open_amounts" for n in payable), payable
    for nodes in (payable, holders):
        assert not any(n["Node Type"] == "Seq Scan" for n in nodes), nodes


def _plan(sql: str) -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}")
        plan = cursor.fetchone()[0]
    return plan[0]["Plan"] if isinstance(plan, list) else plan


def _plan_nodes(node: dict[str, Any]) -> Any:
    yield node
    for child in node.get("Plans", []):
        yield from _plan_nodes(child)

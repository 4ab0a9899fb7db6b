"""Unmatched transfers and finality on Solana's local server (tests/chainwatch/fakes.py, as
tests/scenarios/test_bitcoin_solana_scenarios.py runs it). Solana's default confirmations are the
`finalized` commitment (docs/decisions.md, Money core), so a report is made only once its transfer
is finalized and is `final` from the start; a transfer rolled back before finality (the fork
holding it abandoned) is never reported and never waits for the merchant."""

from __future__ import annotations

import pytest

from attention.selectors import attention_count
from tests.scenarios.conftest import events_of, unmatched_events
from tests.scenarios.test_bitcoin_solana_scenarios import (  # noqa: F401 - the operator's settings
    _operator,
    sol_draft,
    sol_pay,
    status_of,
    tick,
    unmatched,
)

pytestmark = pytest.mark.django_db


def test_solana_a_transfer_that_pays_nothing_is_reported_once_finalized_and_final_from_the_start(
    api_client, owner, solana
):
    draft, reference = sol_draft(api_client, "USDC", 25_000_000)
    far_off = sol_pay(solana, reference, "USDC", 15_000_000)  # 40% short: the merchant's to look at
    tick("Solana", "solana")
    assert unmatched(api_client) == [] and attention_count(owner) == 0  # confirmed, not finalized

    solana.finalize(far_off)
    tick("Solana", "solana")
    (item,) = unmatched(api_client)
    assert item["txId"] == far_off and item["candidateDraftIds"] == [draft["id"]]
    assert item["final"] is True and item["onChain"] is True and item["revertedAt"] is None
    assert attention_count(owner) == 1
    tick("Solana", "solana")
    assert unmatched(api_client) == [item]  # nothing left to follow
    assert [e["txId"] for e in unmatched_events()] == [far_off]
    assert status_of(api_client, draft)["status"] == "Pending"


def test_solana_a_transfer_rolled_back_before_finality_is_never_reported(api_client, owner, solana):
    draft, reference = sol_draft(api_client, "USDC", 25_000_000)
    far_off = sol_pay(solana, reference, "USDC", 15_000_000)
    tick("Solana", "solana")
    solana.roll_back(far_off)  # the fork holding it was abandoned before it was finalized
    tick("Solana", "solana")
    solana.finalize(sol_pay(solana, "Other11111111111111111111111111111111111111", "USDC", 1))  # the cluster goes on
    tick("Solana", "solana")

    assert unmatched(api_client) == [] and unmatched_events() == []
    assert attention_count(owner) == 0
    assert status_of(api_client, draft)["status"] == "Pending"
    assert events_of(draft) == ["draft.created"]

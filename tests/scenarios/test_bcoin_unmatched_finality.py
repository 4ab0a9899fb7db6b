# ruff: noqa: F811 - the fixtures imported below are the arguments of the tests
"""Unmatched transfers followed to finality on the real Bitcoin regtest node (bcoin, as
tests/scenarios/test_bcoin_wallet_scenarios.py runs it), as tests/scenarios/
test_evm_unmatched_finality.py does on anvil: reported at the asset's default confirmations (2),
marked final at FINALITY_DEPTH_REGTEST. (The reorg case on bcoin is left out for now: in full
runs bcoin refused to mine after `invalidateblock`, "Mempool/chain tip mismatch", for over 30 s;
the reorg of an unmatched report is shown on anvil, tests/scenarios/test_evm_unmatched_finality.py.)"""

from __future__ import annotations

import pytest

from tests.scenarios.test_bcoin_confusion_scenarios import draft, shared_address
from tests.scenarios.test_bcoin_wallet_scenarios import (  # noqa: F401 - the node and the watcher's settings
    _watched,
    node,
    tick,
    unmatched,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _finality(settings):
    settings.FINALITY_DEPTHS = {**settings.FINALITY_DEPTHS, "Regtest": 6}


def test_a_reported_transfer_is_final_at_the_finality_depth(api_client, node):
    tick()
    shop = shared_address()
    draft(api_client, shop, 100_000)
    txid = node.pay((shop, 60_000))
    node.mine(2)
    tick()
    assert unmatched(api_client)[txid]["final"] is False  # reported at 2 confirmations, not final
    node.mine(3)
    tick()
    assert unmatched(api_client)[txid]["final"] is False  # 5 deep
    node.mine(1)
    tick()
    item = unmatched(api_client)[txid]
    assert item["final"] is True and item["onChain"] is True and item["revertedAt"] is None

"""The endpoint lists and CHAINWATCH_QUORUM_<NETWORK>: read at start, refused when they cannot hold."""

from __future__ import annotations

import json

import pytest

from chainwatch import networks, quorum
from tests.platform.test_settings import settings_under

PRODUCTION = {"SECRET_KEY": "x" * 50}


def test_a_quorum_larger_than_the_endpoints_configured_is_refused_at_start():
    two = {"RPC_URL_ETHEREUM": "https://a.example/k1,https://b.example/k2", "CHAINWATCH_QUORUM_ETHEREUM": "3"}
    result = settings_under(PRODUCTION | two, "CHAINWATCH_QUORUM")
    assert result.returncode != 0
    assert "CHAINWATCH_QUORUM_ETHEREUM=3 asks for more endpoints than the 2 configured" in result.stderr


def test_a_quorum_is_read_per_network():
    result = settings_under(
        PRODUCTION
        | {"RPC_URL_BASE": "https://a.example,https://b.example,https://c.example", "CHAINWATCH_QUORUM_BASE": "2"},
        "CHAINWATCH_QUORUM",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["CHAINWATCH_QUORUM"] == {"Base": 2}


@pytest.mark.parametrize(("count", "default"), [(2, 2), (3, 3), (4, 3), (5, 3), (7, 4)])
def test_the_default_quorum_is_every_endpoint_up_to_three_then_a_majority(settings, count, default):
    urls = [f"https://user{i}:secret{i}@rpc{i}.example/key{i}" for i in range(count)]
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": " , ".join(urls)}}
    settings.CHAINWATCH_QUORUM = {}
    assert networks.chain_urls("Ethereum") == urls
    assert quorum.active("Ethereum") and quorum.quorum_size("Ethereum") == default
    # Each pass may scan with any of them; the labels never carry the credentials or the key.
    assert networks.endpoints("Ethereum", 1).rpc_url == urls[1]
    assert quorum.endpoint_label(urls[1], 1) == "#2 rpc1.example"


def test_one_endpoint_is_no_quorum_and_lightning_never_has_one(settings):
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": "https://rpc.example"}, "Mainnet": {"esplora_url": "a,b"}}
    assert not quorum.active("Ethereum")
    assert networks.endpoints("Ethereum").rpc_url == "https://rpc.example"
    assert quorum.active("Mainnet", "bitcoin") and not quorum.active("Mainnet", "lightning")

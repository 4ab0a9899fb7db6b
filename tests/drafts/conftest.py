from __future__ import annotations

import pytest
from django.test import override_settings

from tests.formats.conftest import lnurl_server, node_key  # noqa: F401 - Lightning fixtures

# Real, checksum-valid addresses per network.
ADDRESSES = {
    "Mainnet": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
    "Testnet": "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
    "Ethereum": "0x52908400098527886E0F7030069857D2E4169EE7",
    "Sepolia": "0x52908400098527886E0F7030069857D2E4169EE7",
    "Base": "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "BaseSepolia": "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "Solana": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
    "SolanaDevnet": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
    "Signet": "tb1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j20l03x8",
    "Regtest": "bcrt1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j2dkku3w",
}
FEE_ADDRESSES = {
    "Mainnet": "bc1qc7slrfxkknqcq2jevvvkdgvrt8080852dfjewde450xdlk4ugp7szw5tk9",
    "Testnet": "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7",
    "Signet": "tb1qv9eqw5ttwm5dcvgs4nqradsyvh2f3u0xy8el04llq06vhr2mhrmqghj7r4",
    "Regtest": "bcrt1qv9eqw5ttwm5dcvgs4nqradsyvh2f3u0xy8el04llq06vhr2mhrmq9wcck0",
}


@pytest.fixture(autouse=True)
def _operator_fee_addresses():
    with override_settings(
        PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES, API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"}
    ):
        yield


@pytest.fixture
def create(api_client):
    def post(body: dict, **headers):
        return api_client.post("/api/v1/drafts", body, format="json", **headers)

    return post

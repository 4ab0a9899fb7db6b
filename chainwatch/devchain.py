"""A local test chain for trying the service end to end: anvil as Sepolia and as Base Sepolia,
the registry's test tokens deployed on each, and a payer that pays a draft from anvil's
funded account, as a wallet reading the draft would.

Used by `manage.py devchain` and `manage.py devpay` (development only: anvil's first account
is a well-known, unlocked key).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from web3 import Web3
from web3.types import RPCEndpoint, Wei

from core.env import network_env_suffix
from payments.registry import NETWORKS, token_slots

REPO = Path(__file__).resolve().parent.parent
TOKEN_ARTIFACT = Path(__file__).resolve().parent / "test_token.json"  # source and solc output inside
ANVIL = REPO / "node_modules" / "@foundry-rs" / "anvil-linux-amd64" / "bin" / "anvil"
DEV_NETWORKS = ("Sepolia", "BaseSepolia")
DEFAULT_PORTS = {"Sepolia": 8545, "BaseSepolia": 8546}
# Every token minted to each of anvil's funded accounts, in whole units.
MINT_WHOLE_UNITS = 1_000_000
# A block every second: confirmations come without anyone sending transactions.
BLOCK_SECONDS = 1
# Symbols of the deployed contracts: wrapped BTC is WBTC, the others their currency code.
SYMBOLS = {"BTC": "WBTC"}


class DevchainError(Exception):
    pass


def anvil_path() -> Path:
    if ANVIL.exists():
        return ANVIL
    found = shutil.which("anvil")
    if found:
        return Path(found)
    raise DevchainError("anvil is missing: run `npm install` in the checkout (it comes from package.json).")


@dataclass
class Chain:
    network: str
    url: str
    process: subprocess.Popen[bytes] | None = None
    tokens: dict[str, str] = field(default_factory=dict)  # currency -> contract address

    @property
    def w3(self) -> Web3:
        return Web3(Web3.HTTPProvider(self.url, request_kwargs={"timeout": 30}))


def start_anvil(network: str, port: int, *, host: str = "127.0.0.1") -> Chain:
    """anvil with the network's chain id on host:port."""
    chain_id = NETWORKS[network].chain_id
    process = subprocess.Popen(  # noqa: S603 - our own binary and arguments
        [
            str(anvil_path()),
            *("--host", host, "--port", str(port), "--chain-id", str(chain_id)),
            "--silent",  # mines each transaction at once until mine_every_second (setup takes no waiting)
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    chain = Chain(network=network, url=f"http://{host}:{port}", process=process)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace").strip() if process.stderr else ""
            raise DevchainError(f"anvil for {network} stopped at once (is port {port} taken?): {error}")
        try:
            if chain.w3.is_connected():
                return chain
        except Exception:  # noqa: BLE001, S110 - not up yet
            pass
        time.sleep(0.1)
    process.kill()
    raise DevchainError(f"anvil for {network} did not answer on {chain.url} within 30 s.")


def deploy_tokens(chain: Chain) -> dict[str, str]:
    """Deploy a test ERC-20 for every token of the network and mint to each funded account."""
    spec = json.loads(TOKEN_ARTIFACT.read_text())
    w3 = chain.w3
    accounts = w3.eth.accounts
    for currency, decimals in token_slots(chain.network):
        symbol = SYMBOLS.get(currency, currency)
        factory = w3.eth.contract(abi=spec["abi"], bytecode=spec["bytecode"])
        sent = factory.constructor(f"Test {symbol}", symbol, decimals).transact({"from": accounts[0]})
        address = w3.eth.wait_for_transaction_receipt(sent, timeout=60)["contractAddress"]
        assert address is not None  # a deployment's receipt names its contract
        token = w3.eth.contract(address=address, abi=spec["abi"])
        minted = [
            token.functions.mint(account, MINT_WHOLE_UNITS * 10**decimals).transact({"from": accounts[0]})
            for account in accounts
        ]
        for tx in minted:
            w3.eth.wait_for_transaction_receipt(tx, timeout=60)
        chain.tokens[currency] = address
    return chain.tokens


def mine_every_second(chain: Chain) -> None:
    """From now on a block every BLOCK_SECONDS, as on a real chain: confirmations keep coming."""
    chain.w3.provider.make_request(RPCEndpoint("evm_setIntervalMining"), [BLOCK_SECONDS])


def env_values(chains: list[Chain], *, current: dict[str, str]) -> dict[str, str]:
    """The settings that point the service at `chains`, merged with the `current` ones (a .env's)."""
    values: dict[str, str] = {}
    enabled = [n.strip() for n in current.get("ENABLED_NETWORKS", "").split(",") if n.strip()]
    if enabled:  # unset means the default list; otherwise the dev networks are added to it
        values["ENABLED_NETWORKS"] = ",".join(enabled + [c.network for c in chains if c.network not in enabled])
    try:
        tokens = json.loads(current.get("TOKEN_ADDRESSES") or "{}")
    except ValueError:
        tokens = {}
    if not isinstance(tokens, dict):
        tokens = {}
    for chain in chains:
        suffix = network_env_suffix(chain.network)
        values[f"RPC_URL_{suffix}"] = chain.url
        for currency, address in chain.tokens.items():
            tokens.setdefault(currency, {})[chain.network] = address
        fee_name = f"FEE_ADDRESS_{suffix}"
        if not current.get(fee_name):
            values[fee_name] = chain.w3.eth.accounts[-1]  # anvil's last account collects platform fees
    values["TOKEN_ADDRESSES"] = json.dumps(tokens, separators=(",", ":"))  # no spaces: no quotes needed
    values["OUTBOUND_ALLOW_LOOPBACK"] = "true"  # webhooks to a receiver on this machine
    return values


def stop(chains: list[Chain]) -> None:
    for chain in chains:
        if chain.process and chain.process.poll() is None:
            chain.process.terminate()
            try:
                chain.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                chain.process.kill()
                chain.process.wait(timeout=10)


# --- Paying a draft ------------------------------------------------------------------------

ERC20_TRANSFER_ABI = [
    {
        "type": "function",
        "name": "transfer",
        "stateMutability": "nonpayable",
        "inputs": [{"name": "to", "type": "address"}, {"name": "value", "type": "uint256"}],
        "outputs": [{"name": "", "type": "bool"}],
    }
]
WEI_PER_GWEI = 10**9  # ETH drafts count gwei; the chain counts wei


def pay(*, rpc_url: str, receiver: str, amount_base_units: int, token_address: str | None) -> str:
    """Send the amount from anvil's first funded account: an ERC-20 transfer, or ETH (gwei x 10**9
    wei). Returns the transaction hash once mined."""
    w3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 30}))
    payer = w3.eth.accounts[0]
    to = Web3.to_checksum_address(receiver)
    if token_address:
        token = w3.eth.contract(address=Web3.to_checksum_address(token_address), abi=ERC20_TRANSFER_ABI)
        sent = token.functions.transfer(to, amount_base_units).transact({"from": payer})
    else:
        sent = w3.eth.send_transaction({"from": payer, "to": to, "value": Wei(amount_base_units * WEI_PER_GWEI)})
    receipt = w3.eth.wait_for_transaction_receipt(sent, timeout=60)
    if receipt["status"] != 1:
        raise DevchainError(f"The payment {sent.to_0x_hex()} reverted.")
    return sent.to_0x_hex()

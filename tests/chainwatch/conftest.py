"""Fixtures for chain watching: a real anvil node, and local HTTP servers that answer like
Esplora, Bitcoin Core, Solana and Lightning providers (shapes copied from their API docs)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from eth_account import Account
from web3 import Web3

from chainwatch import listener, traces
from chainwatch.devchain import TOKEN_ARTIFACT
from payments.enums import Network
from tests.chainwatch import payer_contract
from tests.ownservers import serve_in_background

REPO = Path(__file__).resolve().parents[2]
ANVIL = REPO / "node_modules" / "@foundry-rs" / "anvil-linux-amd64" / "bin" / "anvil"
FIXTURES = Path(__file__).parent / "fixtures"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Anvil:
    """A running anvil node plus the helpers tests pay with."""

    def __init__(self, url: str, chain_id: int) -> None:
        self.url = url
        self.chain_id = chain_id
        self.w3 = Web3(Web3.HTTPProvider(url))
        self.payer = self.w3.eth.accounts[0]
        self.token = None

    def deploy_token(self, symbol: str = "USDC", decimals: int = 6):
        spec = json.loads(TOKEN_ARTIFACT.read_text())
        factory = self.w3.eth.contract(abi=spec["abi"], bytecode=spec["bytecode"])
        tx = factory.constructor(f"Test {symbol}", symbol, decimals).transact({"from": self.payer})
        receipt = self.w3.eth.wait_for_transaction_receipt(tx)
        token = self.w3.eth.contract(address=receipt["contractAddress"], abi=spec["abi"])
        token.functions.mint(self.payer, 10**18).transact({"from": self.payer})
        return token

    def pay_token(self, token, to: str, amount: int) -> str:
        return token.functions.transfer(to, amount).transact({"from": self.payer}).to_0x_hex()

    def pay_eth(self, to: str, wei: int) -> str:
        return self.w3.eth.send_transaction({"from": self.payer, "to": to, "value": wei}).to_0x_hex()

    def deploy_wallet(self) -> str:
        """A contract wallet (tests/chainwatch/payer_contract.py) that pays through internal calls."""
        tx = self.w3.eth.send_transaction({"from": self.payer, "data": payer_contract.creation_code()})
        return self.w3.eth.wait_for_transaction_receipt(tx)["contractAddress"]

    def pay_through_wallet(
        self, wallet: str, calls: list[tuple[str, int, bytes]], *, revert: bool = False, value: int | None = None
    ) -> str:
        """Send `value` (default: the sum of the calls) to `wallet`, which makes `calls` as internal CALLs."""
        tx = {
            "from": self.payer,
            "to": wallet,
            "value": sum(wei for _, wei, _ in calls) if value is None else value,
            "data": payer_contract.calldata(calls, revert=revert),
            "gas": 1_000_000,  # no estimate: a transaction that reverts must still be mined
        }
        sent = self.w3.eth.send_transaction(tx)
        # anvil mines on its own, but not before send_transaction returns: wait for the receipt.
        self.w3.eth.wait_for_transaction_receipt(sent, timeout=30)
        return sent.to_0x_hex()

    def mine(self, blocks: int = 1) -> None:
        self.w3.provider.make_request("anvil_mine", [hex(blocks)])

    def snapshot(self) -> str:
        return self.w3.provider.make_request("evm_snapshot", [])["result"]

    def revert(self, snapshot_id: str) -> None:
        assert self.w3.provider.make_request("evm_revert", [snapshot_id])["result"] is True

    @property
    def head(self) -> int:
        return self.w3.eth.block_number

    @staticmethod
    def new_address() -> str:
        return Account.create().address


def _start_anvil(chain_id: int) -> tuple[subprocess.Popen, str]:
    if not ANVIL.exists():
        pytest.fail("anvil is missing: run `make test` (it runs npm ci) or `npm ci`")
    port = free_port()
    process = subprocess.Popen(  # noqa: S603
        [str(ANVIL), "--host", "127.0.0.1", "--port", str(port), "--chain-id", str(chain_id), "--silent"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if Web3(Web3.HTTPProvider(url)).is_connected():
                return process, url
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.05)
    process.kill()
    pytest.fail("anvil did not start")


@pytest.fixture(autouse=True)
def fresh_trace_detection() -> Iterator[None]:
    """Each test is a fresh watcher process as far as trace detection goes (ports get reused)."""
    traces.forget()
    yield
    traces.forget()


@pytest.fixture
def anvil_factory() -> Iterator[Callable[[int], Anvil]]:
    processes: list[subprocess.Popen] = []

    def start(chain_id: int) -> Anvil:
        process, url = _start_anvil(chain_id)
        processes.append(process)
        return Anvil(url, chain_id)

    yield start
    for process in processes:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture
def ethereum(anvil_factory, settings) -> Anvil:
    """anvil as the Ethereum network (chain id 1) with a test USDC wired in through settings."""
    node = anvil_factory(1)
    node.token = node.deploy_token("USDC", 6)
    settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": node.url}}
    settings.TOKEN_ADDRESSES = {"USDC": {"Ethereum": node.token.address}}
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 10
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    return node


@pytest.fixture
def base(anvil_factory, settings) -> Anvil:
    """anvil as Base (chain id 8453) with a test USDC."""
    node = anvil_factory(8453)
    node.token = node.deploy_token("USDC", 6)
    settings.CHAINWATCH_ENDPOINTS = {"Base": {"rpc_url": node.url}}
    settings.TOKEN_ADDRESSES = {"USDC": {"Base": node.token.address}}
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 10
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    return node


# --- Local HTTP servers ------------------------------------------------------------------


class FakeServer:
    """http.server on 127.0.0.1 in a thread; `handler(method, path, body)` -> (status, payload)."""

    def __init__(self, handler: Callable[[str, str, bytes, dict], tuple[int, object]]) -> None:
        self.handler = handler
        self.requests: list[tuple[str, str]] = []
        self.bodies: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.requests.append((self.command, self.path))
                outer.bodies.append(body.decode(errors="replace"))
                status, payload = outer.handler(self.command, self.path, body, dict(self.headers))
                if isinstance(payload, Iterator):  # a stream of JSON lines, chunked, as grpc-gateway sends
                    self._stream(status, payload)
                    return
                if isinstance(payload, bytes):  # JSON serialized by the handler itself
                    data, kind = payload, "application/json"
                elif isinstance(payload, str):
                    data, kind = payload.encode(), "text/plain"
                else:
                    data, kind = json.dumps(payload).encode(), "application/json"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, status: int, lines: Iterator[object]) -> None:
                self.protocol_version = "HTTP/1.1"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for line in lines:
                        data = json.dumps(line).encode() + b"\n"
                        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client hung up, as a stream's reader does
                self.close_connection = True

            do_GET = do_POST = _answer  # noqa: N815

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = serve_in_background(self.server)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeServer]]:
    servers: list[FakeServer] = []

    def start(handler) -> FakeServer:
        server = FakeServer(handler)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def rpc_proxy(fake_server, upstream: str, *, hide: tuple[str, ...]) -> FakeServer:
    """A JSON-RPC node in front of `upstream` that answers method-not-found for methods starting
    with any of `hide` (as nodes without trace support do) and passes everything else on.
    `server.methods` lists every method asked, in order."""
    methods: list[str] = []

    def handler(method, path, body, headers):
        payload = json.loads(body)
        items = payload if isinstance(payload, list) else [payload]
        methods.extend(item["method"] for item in items)
        passed = [item for item in items if not item["method"].startswith(hide)]
        answers = {}
        if passed:
            upstream_answer = requests.post(upstream, json=passed, timeout=30).json()
            answers = {answer["id"]: answer for answer in upstream_answer}
        out = [
            answers.get(item["id"])
            or {
                "jsonrpc": "2.0",
                "id": item["id"],
                "error": {"code": -32601, "message": f"the method {item['method']} does not exist/is not available"},
            }
            for item in items
        ]
        return 200, out if isinstance(payload, list) else out[0]

    server = fake_server(handler)
    server.methods = methods
    return server


def load_fixture(name: str):
    return json.loads((FIXTURES / name).read_text())


@pytest.fixture(params=["core", "esplora"])
def bitcoin(request, fake_server, settings):
    """A fake Bitcoin chain served as Bitcoin Core JSON-RPC or as Esplora REST (both run)."""
    from tests.chainwatch.fakes import FakeBitcoin

    chain = FakeBitcoin()
    chain.mine(5)
    chain.backend = request.param
    if request.param == "core":
        server = fake_server(chain.core_handler)
        settings.CHAINWATCH_ENDPOINTS = {"Mainnet": {"bitcoin_rpc_url": server.url.replace("//", "//user:pass@")}}
    else:
        server = fake_server(chain.esplora_handler)
        settings.CHAINWATCH_ENDPOINTS = {"Mainnet": {"esplora_url": server.url}}
    chain.server = server
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 2
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    return chain


@pytest.fixture
def solana(fake_server, settings):
    from tests.chainwatch.fakes import FakeSolana

    cluster = FakeSolana()
    cluster.server = fake_server(cluster.handler)
    settings.CHAINWATCH_ENDPOINTS = {"Solana": {"rpc_url": cluster.server.url}}
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    return cluster


# --- The chain listener ------------------------------------------------------------------


class Running:
    """The listener's watches on an event loop in a thread, as `manage.py chainwatch_listen` runs them."""

    def __init__(self) -> None:
        self.watches: list[listener.Watch] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.started = threading.Event()
        self.task = None

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def main() -> None:
            self.watches = listener.watches()
            self.started.set()
            await listener.listen(self.watches)

        self.task = self.loop.create_task(main())
        try:
            self.loop.run_until_complete(self.task)
        except asyncio.CancelledError:
            pass

    def start(self) -> Running:
        self.thread.start()
        assert self.started.wait(10)
        return self

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.task.cancel)
        self.thread.join(10)

    def wait_for(self, condition, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.02)


@pytest.fixture
def running(settings) -> Iterator[callable]:
    settings.ENABLED_NETWORKS = [Network.ETHEREUM, Network.MAINNET, Network.SOLANA]
    settings.CHAINWATCH_LIGHTNING_ENABLED = False  # each test watches one network of its own
    started: list[Running] = []

    def start() -> Running:
        run = Running().start()
        started.append(run)
        return run

    yield start
    for run in started:
        run.stop()

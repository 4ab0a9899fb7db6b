"""bcoin 1.0.2 (npm), a real Bitcoin node, on regtest in memory with its wallet, watched by the
service's Bitcoin Core watcher (chainwatch.bitcoin.CoreSource) through a JSON-RPC adapter.

The adapter (`RpcAdapter`) passes every call and batch through as it is, except:
1. `getblock <hash> <verbosity>`: bcoin takes two booleans (verbose, details) where Core takes
   0/1/2; 2 becomes `true, true`, 1 `true, false`, 0 `false, false`.
2. Output addresses: bcoin writes its own regtest prefixes (bech32 `rb`, base58 0x3c) in the
   pre-22 `scriptPubKey.addresses` list; the adapter writes Core's regtest address of the
   output script (`bcrt`, 0x6f/0xc4) as `scriptPubKey.address` (Core 22's field) instead.
Everything else (getblockchaininfo, whose `chain` is "regtest" as Core's, getblockhash,
getrawmempool, getrawtransaction <txid> true) bcoin answers as Core does.

The wallet pays through bcoin's wallet REST API (`POST /wallet/primary/send`): its RPC
`getnewaddress` answers mainnet-form addresses, and it takes addresses in its own prefixes.

Two nodes make a network: `BcoinNode(tmp, peer=first)` listens nowhere, connects to `first`
only (bcoin's `--only`, `first` listening on its own P2P port), mines nothing and starts once it
has `first`'s tip; blocks mined on either then reach the other (`synced_with` waits for it).
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from embit.networks import NETWORKS
from embit.script import Script, address_to_scriptpubkey

from tests.ownservers import serve_in_background

ROOT = Path(__file__).resolve().parents[3]
LAUNCHER = Path(__file__).with_name("launch.cjs")
API_KEY = "x"
CORE_REGTEST = NETWORKS["regtest"]
BCOIN_REGTEST = {**CORE_REGTEST, "bech32": "rb", "p2pkh": b"\x3c", "p2sh": b"\x26"}
VERBOSITY = {0: [False, False], 1: [True, False], 2: [True, True]}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _post(url: str, body) -> object:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("Authorization", "Basic " + base64.b64encode(f"x:{API_KEY}".encode()).decode())
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


# --- The JSON-RPC adapter ------------------------------------------------------------------


def _core_address(script_hex: str) -> str | None:
    try:
        return Script(bytes.fromhex(script_hex)).address(CORE_REGTEST)
    except Exception:  # noqa: BLE001 - no address form (OP_RETURN, the witness commitment)
        return None


def _adapt_tx(tx: dict) -> dict:
    for vout in tx.get("vout", []):
        spk = vout.get("scriptPubKey", {})
        spk.pop("addresses", None)
        address = _core_address(spk.get("hex", ""))
        if address:
            spk["address"] = address
    return tx


def _adapt_call(call: dict) -> dict:
    params = call.get("params") or []
    if call.get("method") == "getblock" and len(params) == 2 and isinstance(params[1], int):
        call = {**call, "params": [params[0], *VERBOSITY[params[1]]]}
    return call


def _adapt_answer(call: dict, answer: dict) -> dict:
    result = answer.get("result")
    if call.get("method") == "getblock" and isinstance(result, dict):
        result["tx"] = [_adapt_tx(tx) if isinstance(tx, dict) else tx for tx in result.get("tx", [])]
    elif call.get("method") == "getrawtransaction" and isinstance(result, dict):
        _adapt_tx(result)
    return answer


class RpcAdapter(ThreadingHTTPServer):
    def __init__(self, node_url: str) -> None:
        self.node_url = node_url
        super().__init__(("127.0.0.1", 0), _AdapterHandler)


class _AdapterHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        calls = payload if isinstance(payload, list) else [payload]
        answers = _post(self.server.node_url, [_adapt_call(c) for c in calls])
        out = [_adapt_answer(c, a) for c, a in zip(calls, answers, strict=True)]
        body = json.dumps(out if isinstance(payload, list) else out[0]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


# --- The node and its wallet ---------------------------------------------------------------


class BcoinNode:
    def __init__(self, tmp: Path, peer: BcoinNode | None = None) -> None:
        self.http_port, self.wallet_port, self.p2p_port = _free_port(), _free_port(), _free_port()
        # The first node listens for its peer; a second connects to the first one only.
        p2p = (
            [f"--only=127.0.0.1:{peer.p2p_port}", "--listen=false"]
            if peer
            else ["--listen=true", "--host=127.0.0.1", f"--port={self.p2p_port}"]
        )
        argv = [
            "node",
            str(LAUNCHER),
            "--network=regtest",
            "--memory=true",
            "--index-tx=true",
            "--index-address=true",
            "--workers=false",
            *p2p,
            "--log-level=warning",
            f"--prefix={tmp}",
            f"--http-port={self.http_port}",
            f"--wallet-http-port={self.wallet_port}",
            f"--api-key={API_KEY}",
        ]
        self.log = open(tmp / "bcoin.log", "w")  # noqa: SIM115 - open while the node runs
        self.process = subprocess.Popen(argv, cwd=ROOT, env=os.environ, stdout=self.log, stderr=subprocess.STDOUT)
        self.node_url = f"http://127.0.0.1:{self.http_port}/"
        self._wait()
        self.adapter = RpcAdapter(self.node_url)
        serve_in_background(self.adapter)
        # What the service is given: its Core watcher's URL (credentials as a Core URL has them).
        self.rpc_url = f"http://user:pass@127.0.0.1:{self.adapter.server_address[1]}"
        self.miner = self._wallet("POST", "/wallet/primary/address", {"account": "default"})["address"]
        if peer:
            self.synced_with(peer)
            return
        # Mature coinbases to spend, and segwit active: bcoin's regtest activates it by BIP9
        # signalling, active from height 432 (three windows of 144 blocks); before that its
        # mempool refuses to spend a witness output ("no-witness-yet").
        self.mine(440)
        self._funded()

    def _wait(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"bcoin exited: {(Path(self.log.name)).read_text()[-2000:]}")
            try:
                self.rpc("getblockchaininfo")
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("bcoin did not answer within 60 s")

    def rpc(self, method: str, *params):
        answer = _post(self.node_url, {"method": method, "params": list(params)})
        if answer.get("error"):
            raise RuntimeError(answer["error"])
        return answer["result"]

    def _wallet(self, method: str, path: str, body: dict | None = None) -> dict:
        url = f"http://127.0.0.1:{self.wallet_port}{path}"
        request = urllib.request.Request(url, data=json.dumps(body or {}).encode(), method=method)
        request.add_header("Authorization", "Basic " + base64.b64encode(f"x:{API_KEY}".encode()).decode())
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"bcoin's wallet: {method} {path} {body}: {exc.read().decode()[:500]}") from None

    def mine(self, blocks: int = 1) -> list[str]:
        return self._generate(blocks, self.miner)

    def mine_to(self, address: str, blocks: int = 1) -> list[str]:
        """Blocks whose coinbase pays `address` (a Core regtest address)."""
        return self._generate(blocks, address_to_scriptpubkey(address).address(BCOIN_REGTEST))

    def _generate(self, blocks: int, to: str) -> list[str]:
        """bcoin refuses to mine while its mempool still follows a new tip (just after a reorg,
        on a busy machine: "Mempool/chain tip mismatch"): it is asked again once that is done."""
        deadline = time.monotonic() + 30
        while True:
            try:
                return self.rpc("generatetoaddress", blocks, to)
            except RuntimeError as exc:
                if "tip mismatch" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def tip(self) -> str:
        return str(self.rpc("getbestblockhash"))

    def synced_with(self, other: BcoinNode) -> str:
        """Wait until this node's tip is `other`'s (blocks travel between them by P2P)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            tip = other.tip()
            if self.tip() == tip:
                return tip
            time.sleep(0.1)
        raise RuntimeError(f"bcoin at {self.http_port} did not reach the tip of bcoin at {other.http_port} in 60 s")

    def in_mempool(self, txid: str) -> None:
        """Wait until the node's mempool holds `txid` (it answers a send a moment before)."""
        for _ in range(100):
            if txid in self.rpc("getrawmempool"):
                return
            time.sleep(0.1)
        raise RuntimeError(f"{txid} did not reach bcoin's mempool")

    def _funded(self) -> None:
        """The wallet follows the node asynchronously: wait until it has seen the coinbases."""
        for _ in range(100):
            if self._wallet("GET", "/wallet/primary/balance").get("tx", 0) >= 440:
                return
            time.sleep(0.1)
        raise RuntimeError("bcoin's wallet did not see its coinbases")

    def pay(self, *outputs: tuple[str, int]) -> str:
        """One transaction from the node's wallet paying each (Core regtest address, sats)."""
        body = {
            "rate": 1000,
            "outputs": [
                {"address": address_to_scriptpubkey(address).address(BCOIN_REGTEST), "value": sats}
                for address, sats in outputs
            ],
        }
        return self._wallet("POST", "/wallet/primary/send", body)["hash"]

    def stop(self) -> None:
        self.adapter.shutdown()
        self.process.terminate()
        self.process.wait(10)
        self.log.close()

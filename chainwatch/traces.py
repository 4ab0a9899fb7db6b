"""Contract-internal ETH: value a contract moves with a CALL inside a transaction (a contract
wallet, a multisig or an exchange paying out). Blocks show only the top-level value; the
internal calls are in the node's traces, when it offers them:

- `trace_filter` (Erigon, Nethermind, anvil; OpenEthereum's format): filtered by receiver
  on the node, so it is preferred;
- `debug_traceBlockByNumber` with geth's `callTracer` (geth, anvil): every call of every
  transaction of a block.

Which one a node answers is found once per process (the watcher's first pass) and
recorded on the cursor, where /healthz reads it. With neither, internal transfers are not
seen and the watcher works as before.

An internal payment counts only if its own frame and every frame above it (up to the
transaction itself) succeeded: a reverted frame undoes the value moved beneath it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from chainwatch.transport import ChainError

TRACE_FILTER = "trace_filter"
TRACE_BLOCK = "trace_block"  # the same module's every-trace-of-a-block, for short ranges
DEBUG_TRACE = "debug_traceBlockByNumber"
NO_TRACES = "none"
CALL_TRACER = {"tracer": "callTracer"}

# (network, RPC URL) -> what that node answered, for the life of the process.
_detected: dict[tuple[str, str], str] = {}
# RPC URLs of nodes that offer trace_filter but refused trace_block, for the life of the process.
_no_trace_block: set[str] = set()

# A JSON-RPC call: the method's name and params in, the node's answer out.
Call = Callable[[Any, list[Any]], Any]


@dataclass(frozen=True)
class Frame:
    """One call of a transaction's call tree. `path` is its trace address ([] is the transaction)."""

    path: tuple[int, ...]
    kind: str  # CALL, DELEGATECALL, STATICCALL, CALLCODE, CREATE, SUICIDE/SELFDESTRUCT, ...
    to: str  # lower case; "" when the frame has no receiver
    wei: int
    failed: bool


@dataclass(frozen=True)
class InternalPayment:
    """A succeeded value-moving CALL below the top level. `ordinal` numbers every value-moving
    internal CALL of the transaction in call order (failed or not, watched or not), so the
    same call always gets the same number."""

    ordinal: int
    to: str
    wei: int


def _int(value: Any) -> int:
    if value is None or value == "":
        return 0
    return value if isinstance(value, int) else int(str(value), 16)


def frames_from_trace_list(traces: list[dict[str, Any]]) -> list[Frame]:
    """`trace_transaction` / `trace_filter` items of one transaction, in call order."""
    frames = []
    for trace in traces:
        action = trace.get("action") or {}
        kind = (action.get("callType") if trace.get("type") == "call" else trace.get("type")) or ""
        frames.append(
            Frame(
                path=tuple(int(i) for i in trace.get("traceAddress") or []),
                kind=kind.upper(),
                to=(action.get("to") or "").lower(),
                wei=_int(action.get("value")),
                failed=bool(trace.get("error")),
            )
        )
    return sorted(frames, key=lambda f: f.path)  # trace addresses in order = depth-first call order


def frames_from_call_tracer(root: dict[str, Any]) -> list[Frame]:
    """geth's callTracer tree of one transaction, flattened depth-first (the same order)."""
    frames: list[Frame] = []
    stack: list[tuple[tuple[int, ...], dict[str, Any]]] = [((), root)]
    while stack:
        path, call = stack.pop()
        frames.append(
            Frame(
                path=path,
                kind=(call.get("type") or "").upper(),
                to=(call.get("to") or "").lower(),
                wei=_int(call.get("value")),
                failed=bool(call.get("error")),
            )
        )
        children = call.get("calls") or []
        stack += [((*path, i), child) for i, child in reversed(list(enumerate(children)))]
    return frames


def internal_payments(frames: list[Frame], receivers: set[str]) -> list[InternalPayment]:
    """Succeeded internal CALLs with value to any of `receivers` (lower case), in call order."""
    failed = {f.path for f in frames if f.failed}
    found = []
    ordinal = 0
    for frame in frames:
        if not frame.path or frame.kind != "CALL" or frame.wei <= 0:
            continue
        this, ordinal = ordinal, ordinal + 1
        if frame.to not in receivers:
            continue
        if any(frame.path[:depth] in failed for depth in range(len(frame.path) + 1)):
            continue  # this call or a caller above it reverted: the value never moved
        found.append(InternalPayment(ordinal=this, to=frame.to, wei=frame.wei))
    return found


def _answers(request: Call, method: str, params: list[Any]) -> bool:
    """Whether the node serves `method`: a result means yes, a JSON-RPC error (or a 4xx with
    one) means no. Anything else is a node that did not answer now: raise, try again later."""
    try:
        response = request(method, params)
    except requests.HTTPError as exc:
        status = exc.response.status_code if exc.response is not None else 0
        if (400 <= status < 500 and status != 429) or _is_rpc_error(exc.response):
            return False  # some nodes and gateways refuse an unknown method with an HTTP error status
        raise ChainError(f"{method} probe answered HTTP {status}") from exc
    except requests.RequestException as exc:
        raise ChainError(f"{method} probe failed: {type(exc).__name__}") from exc
    if not isinstance(response, dict):
        raise ChainError(f"{method} probe: unexpected answer {response!r:.200}")
    return "result" in response and not response.get("error")


def _is_rpc_error(response: requests.Response | None) -> bool:
    try:
        body = response.json() if response is not None else None
    except ValueError:
        return False
    return isinstance(body, dict) and bool(body.get("error"))


def probe(request: Call, head: int) -> str:
    """Ask the node which trace method it answers, the cheaper first (both only read `head`)."""
    block = hex(head)
    if _answers(request, TRACE_FILTER, [{"fromBlock": block, "toBlock": block, "toAddress": ["0x" + "0" * 40]}]):
        return TRACE_FILTER
    if _answers(request, DEBUG_TRACE, [block, {**CALL_TRACER, "tracerConfig": {"onlyTopCall": True}}]):
        return DEBUG_TRACE
    return NO_TRACES


def detect(network: str, rpc_url: str, request: Call, head: int) -> tuple[str, bool]:
    """(mode, newly detected): probes the node on the first call in this process only."""
    key = (network, rpc_url)
    if key in _detected:
        return _detected[key], False
    mode = probe(request, head)
    _detected[key] = mode
    return mode, True


def trace_block_offered(rpc_url: str) -> bool:
    return rpc_url not in _no_trace_block


def trace_block_refused(rpc_url: str) -> None:
    _no_trace_block.add(rpc_url)


def forget() -> None:
    """Detect again on the next pass (a restart does the same)."""
    _detected.clear()
    _no_trace_block.clear()

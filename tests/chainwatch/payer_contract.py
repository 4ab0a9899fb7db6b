"""A minimal contract wallet for anvil tests, hand-assembled (no Solidity compiler runs here).

Calldata is a revert flag word followed by calls, each `to ‖ value ‖ length ‖ data`
(32-byte words, data padded to a whole word). The contract makes every call in order with
CALL, ignores whether it failed (as a wallet catching a failed payment would), and at the
end reverts its own frame if the flag is non-zero. Empty calldata just accepts ETH.

So one deployment can pay a receiver through an internal call, pay two receivers in one
transaction, revert after paying, or call another wallet whose frame reverts while the
outer transaction succeeds.
"""

from __future__ import annotations

OPCODES = {
    "STOP": 0x00,
    "ADD": 0x01,
    "MUL": 0x02,
    "DIV": 0x04,
    "LT": 0x10,
    "ISZERO": 0x15,
    "CALLVALUE": 0x34,
    "CALLDATALOAD": 0x35,
    "CALLDATASIZE": 0x36,
    "CALLDATACOPY": 0x37,
    "CODECOPY": 0x39,
    "POP": 0x50,
    "JUMP": 0x56,
    "JUMPI": 0x57,
    "GAS": 0x5A,
    "JUMPDEST": 0x5B,
    "PUSH1": 0x60,
    "PUSH2": 0x61,
    "DUP1": 0x80,
    "DUP2": 0x81,
    "DUP3": 0x82,
    "DUP4": 0x83,
    "DUP7": 0x86,
    "SWAP1": 0x90,
    "CALL": 0xF1,
    "RETURN": 0xF3,
    "REVERT": 0xFD,
}

# Stack comments list the top first.
RUNTIME = [
    ("PUSH1", 0x20),  # [ptr] first call record after the flag word
    "loop:",
    "JUMPDEST",
    "CALLDATASIZE",
    "DUP2",
    "LT",
    "ISZERO",  # [ptr >= size, ptr]
    ("PUSH2", "end"),
    "JUMPI",
    ("PUSH1", 0x40),
    "DUP2",
    "ADD",
    "CALLDATALOAD",  # [len, ptr]
    "DUP1",
    ("PUSH1", 0x60),
    "DUP4",
    "ADD",
    ("PUSH1", 0),
    "CALLDATACOPY",  # memory[0:len] = data; [len, ptr]
    ("PUSH1", 0),
    ("PUSH1", 0),
    "DUP3",
    ("PUSH1", 0),  # [argsOffset 0, argsSize len, retOffset 0, retSize 0, len, ptr]
    ("PUSH1", 0x20),
    "DUP7",
    "ADD",
    "CALLDATALOAD",  # [value, ...]
    "DUP7",
    "CALLDATALOAD",  # [to, value, ...]
    "GAS",
    "CALL",
    "POP",  # [len, ptr]; a failed call is ignored
    ("PUSH1", 31),
    "ADD",
    ("PUSH1", 32),
    "SWAP1",
    "DIV",
    ("PUSH1", 32),
    "MUL",
    "ADD",
    ("PUSH1", 0x60),
    "ADD",  # [next ptr]
    ("PUSH2", "loop"),
    "JUMP",
    "end:",
    "JUMPDEST",
    ("PUSH1", 0),
    "CALLDATALOAD",
    "ISZERO",
    ("PUSH2", "done"),
    "JUMPI",
    ("PUSH1", 0),
    "DUP1",
    "REVERT",
    "done:",
    "JUMPDEST",
    "STOP",
]


def assemble(program: list) -> bytes:
    """Two passes: place labels, then emit (labels are PUSH2 operands)."""
    labels: dict[str, int] = {}
    offset = 0
    for item in program:
        if isinstance(item, str) and item.endswith(":"):
            labels[item[:-1]] = offset
        elif isinstance(item, tuple):
            offset += 1 + int(item[0].removeprefix("PUSH"))
        else:
            offset += 1
    out = bytearray()
    for item in program:
        if isinstance(item, str) and item.endswith(":"):
            continue
        if isinstance(item, tuple):
            name, operand = item
            width = int(name.removeprefix("PUSH"))
            value = labels[operand] if isinstance(operand, str) else operand
            out += bytes([OPCODES[name]]) + value.to_bytes(width, "big")
        else:
            out.append(OPCODES[item])
    return bytes(out)


def creation_code() -> bytes:
    """Init code that returns the runtime code."""
    runtime = assemble(RUNTIME)
    size = len(runtime).to_bytes(2, "big")
    prefix_length = 15
    init = (
        bytes([OPCODES["PUSH2"]]) + size
        + bytes([OPCODES["PUSH2"]]) + prefix_length.to_bytes(2, "big")
        + bytes([OPCODES["PUSH1"], 0, OPCODES["CODECOPY"]])
        + bytes([OPCODES["PUSH2"]]) + size
        + bytes([OPCODES["PUSH1"], 0, OPCODES["RETURN"]])
    )  # fmt: skip
    assert len(init) == prefix_length
    return init + runtime


def calldata(calls: list[tuple[str, int, bytes]], *, revert: bool = False) -> bytes:
    """Encode `[(to, wei, data), ...]` for the wallet; `revert` makes its frame revert at the end."""
    out = int(revert).to_bytes(32, "big")
    for to, wei, data in calls:
        padded = data + b"\0" * (-len(data) % 32)
        out += int(to, 16).to_bytes(32, "big") + wei.to_bytes(32, "big") + len(data).to_bytes(32, "big") + padded
    return out

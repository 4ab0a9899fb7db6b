"""A minimal BIP174/BIP370 key-value reader, written from the BIPs for the tests.

It shares no code with embit (which builds the PSBT), so a template that only
embit could read back would fail here.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field


def _compact_size(stream: io.BytesIO) -> int:
    first = stream.read(1)
    if not first:
        raise ValueError("truncated PSBT")
    size = {0xFD: 2, 0xFE: 4, 0xFF: 8}.get(first[0])
    return first[0] if size is None else int.from_bytes(_read(stream, size), "little")


def _read(stream: io.BytesIO, length: int) -> bytes:
    data = stream.read(length)
    if len(data) != length:
        raise ValueError("truncated PSBT")
    return data


def _map(stream: io.BytesIO) -> dict[bytes, bytes]:
    entries: dict[bytes, bytes] = {}
    while True:
        key_length = _compact_size(stream)
        if key_length == 0:
            return entries
        key = _read(stream, key_length)
        if key in entries:
            raise ValueError(f"duplicate key {key.hex()}")
        entries[key] = _read(stream, _compact_size(stream))


@dataclass
class ParsedPsbt:
    globals: dict[bytes, bytes]
    inputs: list[dict[bytes, bytes]] = field(default_factory=list)
    outputs: list[dict[bytes, bytes]] = field(default_factory=list)


def read_psbt_v2(b64: str) -> ParsedPsbt:
    stream = io.BytesIO(base64.b64decode(b64, validate=True))
    if _read(stream, 5) != b"psbt\xff":
        raise ValueError("bad magic")
    parsed = ParsedPsbt(globals=_map(stream))
    if int.from_bytes(parsed.globals[b"\xfb"], "little") != 2:
        raise ValueError("not a PSBTv2")
    if b"\x00" in parsed.globals:
        raise ValueError("PSBTv2 must not carry an unsigned transaction")
    input_count = _compact_size(io.BytesIO(parsed.globals[b"\x04"]))
    output_count = _compact_size(io.BytesIO(parsed.globals[b"\x05"]))
    parsed.inputs = [_map(stream) for _ in range(input_count)]
    parsed.outputs = [_map(stream) for _ in range(output_count)]
    if stream.read():
        raise ValueError("trailing bytes after the last map")
    return parsed


def output_amount(output: dict[bytes, bytes]) -> int:
    value = output[b"\x03"]  # PSBT_OUT_AMOUNT: int64 little-endian
    assert len(value) == 8
    return int.from_bytes(value, "little", signed=True)


def output_script(output: dict[bytes, bytes]) -> bytes:
    return output[b"\x04"]  # PSBT_OUT_SCRIPT

"""Transfers that reached a draft's address but pay nothing (too far off the amount, or a
second payment), as the chain watchers report them.

chainwatch registers the reader and the recorder from its AppConfig.ready; pay links, beside
chainwatch in the layers, read through here, and the test helpers (drafts.simulation) record a
simulated second payment through here, so neither imports chainwatch."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

_readers: list[Callable[..., list[Any]]] = []
_recorders: list[Callable[..., int]] = []


def unmatched_reader(func: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    """Register `func(*, user_id, draft_ids, since) -> transfers` (network, txid, currency,
    amount_base_units)."""
    if func not in _readers:
        _readers.append(func)
    return func


def unmatched_transfers_for(*, user_id: int, draft_ids: list[str], since: datetime) -> list[Any]:
    found: list[Any] = []
    for reader in _readers:
        found.extend(reader(user_id=user_id, draft_ids=draft_ids, since=since))
    return found


def unmatched_recorder(func: Callable[..., int]) -> Callable[..., int]:
    """Register `func(*, draft, tx_id, amount_base_units, now) -> reports made`: a settled
    transfer to the draft's address that pays nothing, recorded and reported as a watcher does."""
    if func not in _recorders:
        _recorders.append(func)
    return func


def unmatched_transfer_record(*, draft, tx_id: str, amount_base_units: int, now: datetime) -> int:
    return sum(
        recorder(draft=draft, tx_id=tx_id, amount_base_units=amount_base_units, now=now) for recorder in _recorders
    )

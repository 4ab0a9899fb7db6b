"""Transfers that reached a draft's address but pay nothing (too far off the amount, or a
second payment), as the chain watchers report them.

chainwatch registers the reader from its AppConfig.ready; pay links, beside chainwatch in the
layers, read through it here, so neither imports the other."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

_readers: list[Callable[..., list[Any]]] = []


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

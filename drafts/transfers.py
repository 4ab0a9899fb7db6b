"""Transfers that reached a draft's address but pay nothing (too far off the amount, or a
second payment), as the chain watchers report them.

chainwatch registers the recorder from its AppConfig.ready; the test helpers
(drafts.simulation) record a simulated second payment through here, so they do not import
chainwatch. Such transfers are the merchant's business only (dashboard, API): no payer page
reads them, for on a shared address they may be anyone's."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from drafts.models import Draft

_recorders: list[Callable[..., int]] = []


def unmatched_recorder(func: Callable[..., int]) -> Callable[..., int]:
    """Register `func(*, draft, tx_id, amount_base_units, now) -> reports made`: a settled
    transfer to the draft's address that pays nothing, recorded and reported as a watcher does."""
    if func not in _recorders:
        _recorders.append(func)
    return func


def unmatched_transfer_record(*, draft: Draft, tx_id: str, amount_base_units: int, now: datetime) -> int:
    return sum(
        recorder(draft=draft, tx_id=tx_id, amount_base_units=amount_base_units, now=now) for recorder in _recorders
    )

"""The attention list as REST and MCP send it."""

from __future__ import annotations

from typing import Any

from attention.selectors import Attention, Item
from core.wire import json_datetime


def attention_item_json(item: Item) -> dict[str, Any]:
    return {
        "kind": item.kind,
        "objectType": item.object_type,
        "id": item.id,
        "at": json_datetime(item.at),
        "amount": item.amount,
        "currency": item.currency,
        "network": item.network,
        "label": item.label,
        "actions": list(item.actions),
    }


def attention_json(attention: Attention) -> dict[str, Any]:
    return {
        "items": [attention_item_json(item) for item in attention.items],
        "counts": attention.counts(),
        "total": len(attention.items),
    }

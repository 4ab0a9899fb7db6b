"""The JSON shape of a recurring template (decisions.md: {id, name, interval, nextRunAt,
lastRunAt, paused, draft, createdAt}, plus what an owner needs to see why a run failed)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from core.wire import json_datetime, json_number
from recurring.models import RecurringTemplate


def recurring_template_json(template: RecurringTemplate) -> dict[str, Any]:
    return {
        "id": str(template.id),
        "name": template.name,
        "interval": template.interval,
        "timezone": template.time_zone,
        "firstRunAt": json_datetime(template.first_run_at),
        "nextRunAt": None if template.paused else json_datetime(template.next_run_at),
        "lastRunAt": json_datetime(template.last_run_at),
        "paused": template.paused,
        "draft": draft_body_json(template.draft),
        "lastDraftId": str(template.last_draft_id) if template.last_draft_id else None,
        "lastRefusal": template.last_refusal,
        "refusedRuns": template.refused_runs,
        "skippedRuns": template.skipped_runs,
        "createdAt": json_datetime(template.created_at),
        "livemode": template.livemode,
    }


def draft_body_json(draft: dict[str, Any]) -> dict[str, Any]:
    """The stored draft body as the API takes it: fiatAmount a JSON number (it is stored as a string)."""
    if draft.get("fiatAmount") is None:
        return draft
    return {**draft, "fiatAmount": json_number(Decimal(str(draft["fiatAmount"])))}

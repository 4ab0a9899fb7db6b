"""When the runs of a recurring template fall.

Run n is `first_run_at` plus n days, weeks or months on the wall clock of the template's
IANA time zone, so a 09:00 run stays at 09:00 across daylight-saving changes. Monthly runs
keep the day of month of `first_run_at`, clamped to the end of shorter months (Jan 31 ->
Feb 28 -> Mar 31). A wall time that does not exist (the hour skipped in spring) runs at the
same instant as the time one hour earlier would in standard time (02:30 -> 03:30); a wall
time that happens twice (autumn) runs at the first.
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from core.problems import Problem

DAILY, WEEKLY, MONTHLY = "Daily", "Weekly", "Monthly"


def zone_get(name: str, *, field: str = "timezone") -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise Problem(
            f"{name!r} is not an IANA time zone (e.g. Europe/Stockholm, America/New_York, UTC).",
            code="invalid_timezone",
            field=field,
        ) from None


def run_time(*, first_run_at: datetime, interval: str, tz: str, index: int) -> datetime:
    """The UTC time of run number `index` (0 is `first_run_at`)."""
    zone = ZoneInfo(tz)
    wall = first_run_at.astimezone(zone).replace(tzinfo=None)
    if interval == DAILY:
        wall += timedelta(days=index)
    elif interval == WEEKLY:
        wall += timedelta(weeks=index)
    else:
        months = wall.month - 1 + index
        year, month = wall.year + months // 12, months % 12 + 1
        wall = wall.replace(year=year, month=month, day=min(wall.day, calendar.monthrange(year, month)[1]))
    return wall.replace(tzinfo=zone).astimezone(UTC)


def first_index_at_or_after(*, first_run_at: datetime, interval: str, tz: str, moment: datetime, start: int = 0) -> int:
    """The first run number, not below `start`, whose time is at or after `moment`."""
    span = (moment - first_run_at).total_seconds() / 86400
    per_run = {DAILY: 1, WEEKLY: 7, MONTHLY: 31}[interval]
    index = max(start, int(span // per_run) - 2)  # a safe guess below the answer, then step
    while run_time(first_run_at=first_run_at, interval=interval, tz=tz, index=index) < moment:
        index += 1
    return index

"""Every dashboard list filterable and downloadable as CSV: one way to filter (choices and a
date range, in the account's time zone), one writer and one `Export CSV` link.

A list page's view carries `@exportable(SPEC)`: `?format=csv` streams the rows its filters select
(counted against the account's `csv` budget, core.ratelimits) instead of the page. The route is
the page's own, so whoever may read the list may export it (config/authorization.py).
`LISTS` names every exportable list by its route (tests/dashboard/test_list_exports.py walks the
URLconf against it)."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from functools import wraps
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.utils import timezone
from django.utils.dateparse import parse_date

from core.replica import read_alias

CSV_MAX_ROWS = 100_000
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """A cell a spreadsheet would run as a formula (= + - @, a tab or return first) is kept text
    with a leading quote; numbers pass as they are (a negative amount stays a number)."""
    if isinstance(value, str) and value[:1] in FORMULA_STARTS:
        return "'" + value
    return value


def utc(at: datetime | None) -> str:
    return at.isoformat().replace("+00:00", "Z") if at else ""


def local(at: datetime | None) -> str:
    """In the account's time zone (merchant_page activates it), with its offset."""
    return timezone.localtime(at).isoformat(timespec="seconds") if at else ""


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_stream(filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> StreamingHttpResponse:
    """The rows as a CSV download, written as they are read (a long list never sits in memory)."""
    writer = csv.writer(_Echo())
    zone = timezone.get_current_timezone()  # the rows are written after the view has returned

    def lines() -> Iterator[str]:
        with timezone.override(zone):
            yield writer.writerow(header)
            for row in rows:
                yield writer.writerow([csv_safe(cell) for cell in row])

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
    return response


def wants_csv(request: HttpRequest) -> bool:
    # `csv=1`: the audit log's earlier export link, kept working.
    return request.GET.get("format") == "csv" or request.GET.get("csv") == "1"


def day_bound(value: str | None, *, end: bool = False) -> datetime | None:
    """A `YYYY-MM-DD` of the account's time zone as the instant it starts (`end`: the next day's
    start, so the day itself is included)."""
    day = parse_date(value or "") if value else None
    if not isinstance(day, date):
        return None
    at = datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())
    return at + timedelta(days=1) if end else at


@dataclass(frozen=True)
class ListSpec:
    """One exportable list: its route, its rows (`base`: the account's objects in its mode) and
    filters (`choices`: parameter -> (field, allowed values); a date range on `date_field`)."""

    route: str
    filename: str
    header: Sequence[str]
    base: Callable[[Any], QuerySet]  # (MerchantRequest) -> the account's rows
    row: Callable[[Any], Sequence[Any]]
    date_field: str = "created_at"
    date_params: tuple[str, str] = ("from", "to")
    choices: dict[str, tuple[str, Sequence[tuple[str, Any]]]] = field(default_factory=dict)
    # A list whose page filters itself (its own form): the export reuses that queryset.
    own_filters: bool = False

    def filtered(self, request: HttpRequest, params: QueryDict | None = None) -> QuerySet:
        params = request.GET if params is None else params
        queryset = self.base(request)
        if not self.own_filters:
            for param, (name, allowed) in self.choices.items():
                value = params.get(param)
                if value and value in {str(v) for v, _label in allowed}:
                    queryset = queryset.filter(**{name: _typed(value)})
        since, until = (params.get(p) for p in self.date_params)
        if start := day_bound(since):
            queryset = queryset.filter(**{f"{self.date_field}__gte": start})
        if stop := day_bound(until, end=True):
            queryset = queryset.filter(**{f"{self.date_field}__lt": stop})
        return queryset

    def csv(self, request: HttpRequest) -> StreamingHttpResponse:
        # The replica's rows when it may serve this caller (DATABASE_REPLICA_URL), as the page's.
        queryset = self.filtered(request).using(read_alias())
        rows = (self.row(obj) for obj in queryset[:CSV_MAX_ROWS].iterator(chunk_size=500))
        return csv_stream(self.filename, self.header, rows)


def _typed(value: str) -> Any:
    return {"true": True, "false": False}.get(value, value)


LISTS: dict[str, ListSpec] = {}


def exportable(spec: ListSpec) -> Callable:
    """The view of a list page: `?format=csv` downloads what its filters select."""
    LISTS[spec.route] = spec

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse | StreamingHttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse | StreamingHttpResponse:
            if request.method == "GET" and wants_csv(request):
                from dashboard.security import costly_refusal

                return costly_refusal(request, "csv") or spec.csv(request)
            return view(request, *args, **kwargs)

        return wrapped

    return decorate

"""Paged lists: one rule for every list (docs/api.md, Lists).

Every list is newest first (`created_at`, then id, both descending) and takes the same query
parameters: `page`/`pageSize` (page numbers, as the spec gives GET /drafts) or
`startingAfter`/`limit` (a cursor: the id of the last item already read). A cursor is a keyset
on (created_at, id), so rows written between two calls never shift the next page, as an
offset would. The answer is the envelope {items, page, pageSize, total, next}; a list the spec
shows as a plain array (GET /payment-requests) sends the items alone with `total` in
X-Total-Count and `next` in X-Next-Cursor.

`total` is exact up to LIST_TOTAL_EXACT_UP_TO rows, counted at each request with a bounded
count; a longer list (an account with millions of drafts) is counted whole at most once per
LIST_TOTAL_CACHE_SECONDS for the same query, so its `total` may be that old (docs/decisions.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q, QuerySet
from drf_spectacular.utils import OpenApiParameter
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework import serializers

from core.api.serializers import StrictSerializer
from core.problems import Problem
from core.replica import replica_read

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
# Deep enough for any real listing, and keeps the row offset far inside a 64-bit integer.
MAX_PAGE = 1_000_000
# The one order of every list, and the keyset a cursor walks.
NEWEST_FIRST = ("-created_at", "-pk")
# The query parameters every list takes (tests/platform/test_lists.py checks each list's).
PAGE_PARAMETERS = ("page", "pageSize", "limit", "startingAfter")


class PageQuerySerializer(serializers.Serializer[Any]):
    page = serializers.IntegerField(min_value=1, max_value=MAX_PAGE, default=1)
    pageSize = serializers.IntegerField(min_value=1, max_value=MAX_PAGE_SIZE, default=DEFAULT_PAGE_SIZE)
    limit = serializers.IntegerField(
        min_value=1, max_value=MAX_PAGE_SIZE, required=False, help_text="Same as pageSize."
    )
    startingAfter = serializers.UUIDField(required=False, help_text="A page's next.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        given = self.initial_data
        if "limit" in attrs:
            if "pageSize" in given:
                raise serializers.ValidationError(
                    {"limit": "Give limit or pageSize, not both."}, code="unsupported_combination"
                )
            attrs["pageSize"] = attrs.pop("limit")
        if "startingAfter" in attrs and "page" in given:
            raise serializers.ValidationError(
                {"startingAfter": "Give startingAfter or page, not both."}, code="unsupported_combination"
            )
        return attrs


class _StrictPageQuery(StrictSerializer, PageQuerySerializer):
    pass


@dataclass(frozen=True)
class Page:
    items: list[Any]
    page: int | None  # None when read by cursor
    page_size: int
    total: int
    next: str | None  # the id to pass as startingAfter; None on the last page

    def envelope(self, items: Collection[Any]) -> dict[str, Any]:
        return {"items": items, "page": self.page, "pageSize": self.page_size, "total": self.total, "next": self.next}

    def headers(self) -> dict[str, str]:
        """What a plain-array list sends beside its items."""
        headers = {"X-Total-Count": str(self.total)}
        if self.next is not None:
            headers["X-Next-Cursor"] = self.next
        return headers


# A plain-array list's headers, for its OpenAPI description (extend_schema parameters).
PLAIN_ARRAY_HEADERS = [
    OpenApiParameter(
        "X-Total-Count", int, OpenApiParameter.HEADER, response=True, description="Items in the whole list"
    ),
    OpenApiParameter(
        "X-Next-Cursor",
        str,
        OpenApiParameter.HEADER,
        response=True,
        description="Pass as startingAfter for the next page; absent on the last",
    ),
]


def paginate(queryset: QuerySet[Any], query_params: Mapping[str, Any]) -> Page:
    """One page for query parameters that may hold only the page parameters: any other is a 400
    naming it (a list with filters validates them in its own StrictSerializer query)."""
    params = _StrictPageQuery(data={k: query_params[k] for k in query_params})
    params.is_valid(raise_exception=True)
    return page_of(queryset, params.validated_data)


def page_of(queryset: QuerySet[Any], wanted: dict[str, Any], *, within: QuerySet[Any] | None = None) -> Page:
    """One page of a list for a PageQuerySerializer's validated parameters, with the total count.

    `within`: where `startingAfter` is looked up (the account's rows of this list, whatever the
    filters: an item that left the filter since the last page is still a place to go on from);
    by default the list itself. An id not there, another account's included, is a 400 naming
    the parameter. Read from the read replica when there is one and it may serve this caller
    (core/replica.py)."""
    return replica_read(lambda: _page_of(queryset, wanted, within))


def _page_of(queryset: QuerySet[Any], wanted: dict[str, Any], within: QuerySet[Any] | None) -> Page:
    size = wanted["pageSize"]
    ordered = queryset.order_by(*NEWEST_FIRST)
    after = wanted.get("startingAfter")
    if after is None:
        number: int | None = wanted["page"]
        start = (wanted["page"] - 1) * size
        rows = list(ordered[start : start + size + 1])
    else:
        number = None
        mark = _cursor_row(queryset if within is None else within, after)
        # The first term bounds the index range (the OR alone would be read from the list's start).
        later = Q(created_at__lte=mark["created_at"]) & (
            Q(created_at__lt=mark["created_at"]) | Q(created_at=mark["created_at"], pk__lt=mark["pk"])
        )
        rows = list(ordered.filter(later)[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return Page(
        items=rows,
        page=number,
        page_size=size,
        total=list_total(queryset),
        next=str(rows[-1].pk) if more else None,
    )


def list_total(queryset: QuerySet[Any]) -> int:
    """The rows of `queryset`: counted at once up to LIST_TOTAL_EXACT_UP_TO, beyond it the
    whole count made at most once per LIST_TOTAL_CACHE_SECONDS for this query."""
    unordered = queryset.order_by()
    cap = settings.LIST_TOTAL_EXACT_UP_TO
    bounded = unordered.values("pk")[: cap + 1].count()
    if bounded <= cap:
        return bounded
    sql, params = unordered.query.sql_with_params()
    key = "list-total:" + hashlib.sha256(repr((sql, params)).encode()).hexdigest()
    try:
        total = cache.get(key)
    except (RedisConnectionError, RedisTimeoutError):  # the cache down: count, as without it
        total = None
    if total is None:
        total = unordered.count()
        try:
            cache.set(key, total, settings.LIST_TOTAL_CACHE_SECONDS)
        except (RedisConnectionError, RedisTimeoutError):  # the cache down: the count is not reused
            pass
    return int(total)


def _cursor_row(queryset: QuerySet[Any], after: UUID) -> dict[str, Any]:
    try:
        mark = queryset.order_by().filter(pk=after).values("pk", "created_at").first()
    except (DjangoValidationError, ValueError):  # not an id of this list's form
        mark = None
    if mark is None:
        raise Problem("No item of this list has this id: pass a page's next.", code="invalid", field="startingAfter")
    return mark


def paged_envelope_serializer(
    name: str, item_serializer: type[serializers.Serializer[Any]]
) -> type[serializers.Serializer[Any]]:
    """A schema-only serializer describing {items, page, pageSize, total, next}."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "items": item_serializer(many=True),
            "page": serializers.IntegerField(allow_null=True, help_text="The page number; null when read by cursor."),
            "pageSize": serializers.IntegerField(),
            "total": serializers.IntegerField(help_text="Items in the whole list (with its filters)."),
            "next": serializers.CharField(
                allow_null=True, help_text="Pass as startingAfter for the next page; null on the last."
            ),
        },
    )

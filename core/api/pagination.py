"""Paged lists: {items, page, pageSize, total}, and the plain-array variant with X-Total-Count."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers

MAX_PAGE_SIZE = 100
# Deep enough for any real listing, and keeps the row offset far inside a 64-bit integer.
MAX_PAGE = 1_000_000


class PageQuerySerializer(serializers.Serializer):
    page = serializers.IntegerField(min_value=1, max_value=MAX_PAGE, default=1)
    pageSize = serializers.IntegerField(min_value=1, max_value=MAX_PAGE_SIZE, default=20)


@dataclass(frozen=True)
class Page:
    items: list[Any]
    page: int
    page_size: int
    total: int

    def envelope(self, items: list[Any]) -> dict[str, Any]:
        return {"items": items, "page": self.page, "pageSize": self.page_size, "total": self.total}


def paginate(queryset: QuerySet, query_params) -> Page:
    params = PageQuerySerializer(data={k: query_params[k] for k in ("page", "pageSize") if k in query_params})
    params.is_valid(raise_exception=True)
    return page_of(queryset, page=params.validated_data["page"], page_size=params.validated_data["pageSize"])


def page_of(queryset: QuerySet, *, page: int, page_size: int) -> Page:
    """One page of an ordered queryset, with the total count."""
    start = (page - 1) * page_size
    return Page(items=list(queryset[start : start + page_size]), page=page, page_size=page_size, total=queryset.count())


def paged_envelope_serializer(name: str, item_serializer: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """A schema-only serializer describing {items, page, pageSize, total}."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "items": item_serializer(many=True),
            "page": serializers.IntegerField(),
            "pageSize": serializers.IntegerField(),
            "total": serializers.IntegerField(),
        },
    )

"""`{% list_filters %}`: the filters of the page's list (dashboard.lists) and its Export CSV link."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext_lazy as _

from dashboard.exports import LISTS

register = template.Library()

LABELS = {
    "status": _("Status"),
    "network": _("Network"),
    "direction": _("Direction"),
    "paused": _("Paused"),
    "active": _("Active"),
    "role": _("Role"),
    "type": _("Event"),
}
NOT_KEPT = {"page", "format", "csv"}


@register.inclusion_tag("dashboard/_list_filters.html", takes_context=True)
def list_filters(context, form: bool = True) -> dict:
    """`form=False`: the link only, for a page whose own form filters (its dates too)."""
    request = context["request"]
    spec = LISTS.get(request.resolver_match.view_name)
    if spec is None:  # the list's template shown by another view (a confirmation step): no filters
        return {"form": False, "export_url": ""}
    params = request.GET
    since, until = spec.date_params
    shown = {since, until} | (set() if spec.own_filters else set(spec.choices))
    selects = []
    if not spec.own_filters:
        for param, (_field, allowed) in spec.choices.items():
            options = [(str(value), label) for value, label in allowed]
            selects.append((param, LABELS.get(param, param), options, params.get(param, "")))
    kept = [(k, v) for k, values in params.lists() for v in values if k not in NOT_KEPT | shown]
    query = params.copy()
    for key in NOT_KEPT:
        query.pop(key, None)
    query["format"] = "csv"
    return {
        "form": form,
        "selects": selects,
        "since": (since, params.get(since, "")),
        "until": (until, params.get(until, "")),
        "kept": kept,
        "export_url": "?" + query.urlencode(),
    }


@register.simple_tag(takes_context=True)
def filters_query(context) -> str:
    """The page's filters as a query string ending in `&` (for a pager link: `?{% filters_query %}page=2`)."""
    query = context["request"].GET.copy()
    for key in NOT_KEPT:
        query.pop(key, None)
    encoded = query.urlencode()
    return encoded + "&" if encoded else ""

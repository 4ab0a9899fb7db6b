"""`{{ draft.id|short_id }}`: an id as pages and email subjects show it (core/ids.py)."""

from __future__ import annotations

from django import template

from core import ids

register = template.Library()
register.filter("short_id", ids.short_id)

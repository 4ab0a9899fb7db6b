"""Navigation of the dashboard, for every page that extends dashboard/base.html."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

NAV = [
    ("dashboard:overview", _("Overview")),
    ("dashboard:drafts", _("Drafts")),
    ("dashboard:paylinks", _("Pay links")),
    ("dashboard:templates", _("Recurring")),
    ("dashboard:address_book", _("Address book")),
    ("dashboard:webhooks", _("Webhooks")),
    ("dashboard:api_keys", _("API keys")),
    ("dashboard:transfers", _("Transfers")),
    ("dashboard:fees", _("Fees")),
    ("dashboard:security", _("Security")),
    ("dashboard:notifications", _("Notifications")),
]
# Pages that belong to a section of the navigation.
SECTIONS = {
    "dashboard:drafts": ("dashboard:draft", "dashboard:draft_new"),
    "dashboard:webhooks": ("dashboard:webhook",),
    "dashboard:paylinks": ("dashboard:paylink", "dashboard:paylink_new"),
}


def navigation(request) -> dict:
    return {"nav": NAV, "nav_sections": SECTIONS, "display": getattr(request, "display", None)}

"""Navigation of the dashboard, for every page that extends dashboard/base.html."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

NAV = [
    ("dashboard:overview", _("Overview")),
    ("dashboard:drafts", _("Drafts")),
    ("dashboard:paylinks", _("Pay links")),
    ("dashboard:refunds", _("Refunds")),
    ("dashboard:templates", _("Recurring")),
    ("dashboard:address_book", _("Address book")),
    ("dashboard:receiving_wallets", _("Receiving wallets")),
    ("dashboard:webhooks", _("Webhooks")),
    ("dashboard:api_keys", _("API keys")),
    ("dashboard:transfers", _("Transfers")),
    ("dashboard:fees", _("Fees")),
    ("dashboard:security", _("Security")),
    ("dashboard:notifications", _("Notifications")),
    ("dashboard:profile", _("Profile")),
]
# Pages that belong to a section of the navigation.
SECTIONS = {
    "dashboard:drafts": ("dashboard:draft", "dashboard:draft_new"),
    "dashboard:webhooks": ("dashboard:webhook",),
    "dashboard:paylinks": ("dashboard:paylink", "dashboard:paylink_new"),
    "dashboard:refunds": ("dashboard:refund", "dashboard:refund_new"),
}


def navigation(request) -> dict:
    from dashboard.security import test_mode_on

    return {
        "nav": NAV,
        "nav_sections": SECTIONS,
        "test_mode": hasattr(request, "session") and test_mode_on(request),
        "display": getattr(request, "display", None),
    }

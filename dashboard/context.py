"""Navigation of the dashboard, for every page that extends dashboard/base.html."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

# The navigation in four groups: the groups in one row, the current group's pages below it
# (so the section a page belongs to is always in view, at 360 px too).
NAV_GROUPS: list[tuple[Promise, list[tuple[str, Promise]]]] = [
    (
        _("Payments"),
        [
            ("dashboard:overview", _("Overview")),
            ("dashboard:drafts", _("Drafts")),
            ("dashboard:paylinks", _("Pay links")),
            ("dashboard:templates", _("Recurring")),
            ("dashboard:transfers", _("Transfers")),
            ("dashboard:fees", _("Fees")),
        ],
    ),
    (
        _("Customers"),
        [
            ("dashboard:refunds", _("Refunds")),
            ("dashboard:address_book", _("Address book")),
        ],
    ),
    (
        _("Developers"),
        [
            ("dashboard:webhooks", _("Webhooks")),
            ("dashboard:webhook_deliveries", _("Deliveries")),
            ("dashboard:events", _("Events")),
            ("dashboard:api_keys", _("API keys")),
        ],
    ),
    (
        _("Settings"),
        [
            ("dashboard:profile", _("Profile")),
            ("dashboard:receiving_wallets", _("Receiving wallets")),
            ("dashboard:security", _("Security")),
            ("dashboard:notifications", _("Notifications")),
            ("dashboard:team", _("Team")),
            ("dashboard:audit_log", _("Audit log")),
        ],
    ),
]
NAV = [item for _group, items in NAV_GROUPS for item in items]
# Pages that belong to a section of the navigation.
SECTIONS = {
    "dashboard:drafts": ("dashboard:draft", "dashboard:draft_new"),
    "dashboard:webhooks": ("dashboard:webhook",),
    "dashboard:paylinks": ("dashboard:paylink", "dashboard:paylink_new"),
    "dashboard:refunds": ("dashboard:refund", "dashboard:refund_new"),
}


@dataclass(frozen=True)
class NavGroup:
    label: str
    url: str
    current: bool
    items: list[tuple[str, str, bool]]  # (url, label, the page shown now)


def _page_of(view_name: str | None) -> str | None:
    """The navigation entry a view belongs to (a draft's page to Drafts)."""
    for name, _label in NAV:
        if view_name == name or view_name in SECTIONS.get(name, ()):
            return name
    return None


def nav_groups(view_name: str | None) -> list[NavGroup]:
    shown = _page_of(view_name)
    groups = []
    for label, items in NAV_GROUPS:
        entries = [(reverse(name), str(item_label), name == shown) for name, item_label in items]
        groups.append(NavGroup(label=str(label), url=entries[0][0], current=any(e[2] for e in entries), items=entries))
    return groups


def navigation(request) -> dict:
    from dashboard.security import test_mode_on

    match = getattr(request, "resolver_match", None)
    groups = nav_groups(match.view_name if match else None)
    return {
        "nav": NAV,
        "nav_groups": groups,
        # The group of the page shown (none: a page outside the navigation, such as Confirm).
        "nav_group": next((g for g in groups if g.current), None),
        "nav_sections": SECTIONS,
        "test_mode": hasattr(request, "session") and test_mode_on(request),
        "display": getattr(request, "display", None),
        # The organization switcher: the person's organizations (accounts.teams), when several.
        "organizations": _organizations(request),
        "person": getattr(request, "person", None),
        "role": getattr(request, "role", None),
        # Called by the template once (`with`), only where the navigation is drawn: one statement.
        "attention_count": lambda: _attention_count(request),
    }


def _attention_count(request) -> int:
    from attention.selectors import attention_count

    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return 0
    return attention_count(user)


def _organizations(request) -> list:
    from accounts.teams import organizations_of

    person = getattr(request, "person", None)
    if person is None:
        return []
    memberships = organizations_of(person=person)
    return memberships if len(memberships) > 1 else []

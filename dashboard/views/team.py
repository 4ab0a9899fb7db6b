"""Dashboard: the team (members, roles, invitations) and the audit log (filters, CSV export).
Who may open them is the authorization table's (an owner or admin)."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.dateparse import parse_date
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts import invitations, teams
from accounts.models import Role
from audit.selectors import audit_entries, audit_entry_json
from core.problems import Problem
from core.replica import replica_read
from dashboard.exports import exportable
from dashboard.lists import AUDIT_LOG, TEAM
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import PAGE_SIZE

CSV_MAX_ROWS = 10_000


@merchant_page
@exportable(TEAM)
def team(request: MerchantRequest) -> HttpResponse:
    if request.method == "POST":
        try:
            invitations.invitation_create(
                organization=request.user,
                inviter=request.person,
                inviter_role=request.role,
                email=request.POST.get("email", ""),
                role=request.POST.get("role", ""),
            )
            messages.success(request, _("Invitation sent. The link works for 7 days."))
        except (Problem, ValueError) as problem:
            messages.error(request, getattr(problem, "detail", _("Choose a role.")))
        return redirect("dashboard:team")
    context = {
        "members": TEAM.filtered(request),
        "pending": [
            (invitation, invitations.email_masked(invitation.email))
            for invitation in invitations.invitations_pending(organization=request.user)
        ],
        "roles": Role.choices,  # (value, the translated label)
    }
    return render(request, "dashboard/team.html", context)


@merchant_page
@require_POST
def team_member(request: MerchantRequest, person_id) -> HttpResponse:
    """Change a member's role, or remove them (`remove`)."""
    try:
        membership = teams.member_get(organization=request.user, person_public_id=person_id)
        if membership.role == Role.OWNER or request.POST.get("role") == Role.OWNER:
            invitations.role_grant_check(granter_role=request.role, role=Role.OWNER)
        if "remove" in request.POST:
            teams.member_remove(membership=membership)
            messages.success(request, _("Member removed; their sessions and the keys they made stopped."))
        else:
            teams.member_role_set(membership=membership, role=request.POST.get("role", ""))
            messages.success(request, _("Role changed."))
    except (Problem, ValueError) as problem:
        messages.error(request, getattr(problem, "detail", _("Choose a role.")))
    return redirect("dashboard:team")


@merchant_page
@require_POST
def team_invitation_revoke(request: MerchantRequest, invitation_id) -> HttpResponse:
    try:
        invitations.invitation_revoke(organization=request.user, invitation_id=invitation_id)
        messages.success(request, _("Invitation revoked."))
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:team")


def _day(value: str | None, *, end: bool = False) -> datetime | None:
    day = parse_date(value or "") if value else None
    if day is None:
        return None
    at = datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())
    return at + timedelta(days=1) if end else at


@merchant_page
@exportable(AUDIT_LOG)
def audit_log(request: HttpRequest) -> HttpResponse:
    """The audit log, newest first: filtered by action (or a family: `member.`) and days; `format=csv`
    downloads what the filters select (dashboard.exports)."""
    filters = {key: request.GET.get(key, "").strip() for key in ("action", "since", "until")}
    try:
        entries = audit_entries(
            organization=request.user,
            action=filters["action"] or None,
            since=_day(filters["since"]),
            until=_day(filters["until"], end=True),
        )
    except ValueError:
        entries = audit_entries(organization=request.user)
    page = max(int(request.GET.get("page", "1")) if request.GET.get("page", "1").isdigit() else 1, 1)
    shown = replica_read(lambda: [audit_entry_json(e) for e in entries[(page - 1) * PAGE_SIZE : page * PAGE_SIZE + 1]])
    context = {"entries": shown[:PAGE_SIZE], "more": len(shown) > PAGE_SIZE, "page": page, "filters": filters}
    return render(request, "dashboard/audit_log.html", context)

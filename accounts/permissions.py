"""Scope checks. Views declare ``required_scopes``: a dict from action name (viewsets)
or HTTP method (plain views) to one scope; a view without an entry needs none beyond
authentication. A logged-in session acts for its own account with every scope.
"""

from __future__ import annotations

from rest_framework import permissions

from accounts.models import ApiKey
from core.problems import Problem


class MissingScope(Problem):
    status_code = 403
    default_code = "missing_scope"


class SessionRequired(Problem):
    status_code = 403
    default_code = "session_required"
    default_detail = "This endpoint needs a logged-in session; API keys cannot use it."


def required_scope_for(view, method: str) -> str | None:
    scopes = getattr(view, "required_scopes", None) or {}
    action = getattr(view, "action", None)
    if action is None:
        action = (getattr(view, "action_map", None) or {}).get(method.lower())
    return scopes.get(action) or scopes.get(method)


class HasScope(permissions.BasePermission):
    """Authenticated, and the API key (if any) carries the scope the action needs."""

    def has_permission(self, request, view) -> bool:
        if getattr(view, "public", False):
            return True
        if not (request.user and request.user.is_authenticated):
            return False
        api_key = request.auth if isinstance(request.auth, ApiKey) else None
        if getattr(view, "session_only", False):
            if api_key is not None:
                raise SessionRequired()
            return True
        scope = required_scope_for(view, request.method)
        if api_key is not None and scope and scope not in api_key.scopes:
            raise MissingScope(f"This API key lacks the scope {scope}.", extra={"requiredScope": scope})
        return True

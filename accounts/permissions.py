"""The REST API's permission class: the authorization table's rule for the route and method
(accounts/authorization.py, the table in config/authorization.py). Views declare nothing.
"""

from __future__ import annotations

from rest_framework import exceptions, permissions

from accounts.authorization import (
    OPEN,
    MissingScope,
    SessionRequired,
    Undeclared,
    key_refusal,
    rule_for,
    session_refusal,
)
from accounts.models import ApiKey

__all__ = ["HasScope", "MissingScope", "SessionRequired"]


class HasScope(permissions.BasePermission):
    """The caller is one the table lets call this route: an API key is checked for its scope
    and mode, a session for what its rule asks more (a recent second factor, staff)."""

    def has_permission(self, request, view) -> bool:
        match = request._request.resolver_match
        try:
            rule = rule_for(match.view_name if match is not None else None, request.method)
        except Undeclared:
            raise exceptions.MethodNotAllowed(request.method) from None
        if rule.kind in OPEN:
            return True
        auth = request.auth
        if isinstance(auth, ApiKey):
            refusal = key_refusal(rule, auth)
            if refusal is not None:
                raise refusal
            return True
        if not (request.user and request.user.is_authenticated):
            return rule.anonymous  # False: 401 for a route that needs a caller
        refusal = session_refusal(rule, request)
        if refusal is not None:
            raise refusal
        return True

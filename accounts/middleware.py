"""Django's browser-session middleware (sessions, CSRF, the signed-in user, messages), which
a call that names an API key skips.

A REST call whose Authorization header is `Bearer ...` is authenticated by that key alone:
`accounts.authentication.ApiKeyAuthentication` accepts or refuses it and the session is never
consulted, its views are CSRF-exempt (DRF checks CSRF only for session-authenticated calls)
and the API sends no flash messages. For such a call these middlewares would only make a
session store, read the CSRF cookie, wrap a lazy user and set up message storage: 2% of the
instructions of a draft's creation through the API, 5% of a read's. The sign-in steps under
/api/v1/auth/ are the exception, whatever header comes along: they are how a browser session
comes to exist (and ends), so they always have it. Every other request (pages, the
dashboard, the admin, an API call from a signed-in browser without a key) passes through
them as through Django's own classes.

A skipped call's Django request has no `session`, `_messages`, nor a `user` until DRF's
authentication sets it (DRF copies its user onto the Django request).
"""

from __future__ import annotations

from typing import cast
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import middleware as auth_middleware
from django.contrib.auth.views import redirect_to_login
from django.contrib.messages import middleware as messages_middleware
from django.contrib.sessions import middleware as sessions_middleware
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect, JsonResponse
from django.middleware import csrf
from django.urls import reverse
from django.utils.deprecation import MiddlewareMixin
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext as _

from accounts.authentication import ApiKeyAuthentication
from accounts.authorization import (
    Kind,
    NoRule,
    NotAMember,
    SecondFactorRequired,
    Undeclared,
    rule_for,
    session_refusal,
)
from accounts.sessions import client_ip, session_sign_out
from accounts.stepup import StepUpRequired
from accounts.teams import OrganizationRequest, organization_resolve, second_factor_missing
from audit.context import actor_set
from core.errors import permission_denied, wants_html

API_PREFIX = "/api/"
SIGN_IN_PREFIX = "/api/v1/auth/"  # accounts/api/urls.py: register, sign in and out, passkeys, TOTP


def keyed_api_call(request: HttpRequest) -> bool:
    """A REST API call that presents an API key (an `Authorization: Bearer` header), other
    than a sign-in step."""
    path = request.path_info
    if not path.startswith(API_PREFIX) or path.startswith(SIGN_IN_PREFIX):
        return False
    scheme = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")[0]
    return scheme.lower() == ApiKeyAuthentication.keyword.lower()  # the key alone decides then


class _SkippedByKeyedApiCalls(MiddlewareMixin):
    def __call__(self, request: HttpRequest):
        if keyed_api_call(request):
            return self.get_response(request)  # an awaitable when the chain is async: returned as it is
        return super().__call__(request)


class SessionMiddleware(_SkippedByKeyedApiCalls, sessions_middleware.SessionMiddleware):
    pass


class CsrfViewMiddleware(_SkippedByKeyedApiCalls, csrf.CsrfViewMiddleware):
    """Its `process_view` still runs for a keyed call (Django calls it apart from `__call__`):
    API views are CSRF-exempt, so it returns at once."""


class AuthenticationMiddleware(_SkippedByKeyedApiCalls, auth_middleware.AuthenticationMiddleware):
    pass


class MessageMiddleware(_SkippedByKeyedApiCalls, messages_middleware.MessageMiddleware):
    pass


class AuthorizationMiddleware(MiddlewareMixin):
    """The authorization table's rule for a page (every view that is not DRF's: the dashboard,
    /account, /pay, /refund, the admin, the probes), checked before the view runs. DRF views
    are left to their permission class (`accounts.permissions.HasScope`), which reads the same
    table once the API key is authenticated.

    Before the rule, a signed-in session's organization and role are resolved
    (`accounts.teams.organization_resolve`, for DRF views too): on an organization's route
    (a rule with a role) `request.user` becomes the organization's account, the owner every
    view works with; `request.person` is who signed in.

    Pages never read an API key. A visitor on a page for the signed-in goes to sign-in (the
    admin's pages: the admin's own sign-in door); a session without what its rule asks more
    gets 403."""

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs):
        drf = hasattr(view_func, "cls")  # a DRF view (APIView.as_view sets `cls`): HasScope checks it
        match = request.resolver_match
        try:
            rule = rule_for(match.view_name if match is not None else None, request.method or "")
        except Undeclared as undeclared:
            return None if drf else HttpResponseNotAllowed(undeclared.allowed)
        except NoRule as refused:
            return None if drf else _refused(request, refused)
        if rule.anonymous:
            return None
        user = getattr(request, "user", None)  # none on a keyed API call (the middleware above skipped it)
        signed_in = user is not None and user.is_authenticated
        if user is not None and signed_in:
            # The organization worked in and the role there (accounts.teams), once per request.
            resolved = cast(OrganizationRequest, request)  # organization_resolve sets person, account, role
            if not organization_resolve(resolved, user):
                session_sign_out(request)  # removed from the organization: the session ends now
                not_member = NotAMember()
                if drf or not wants_html(request):
                    return JsonResponse(
                        not_member.document(), status=not_member.status_code, content_type="application/problem+json"
                    )
                return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
            actor_set(person=user, ip=client_ip(request.META))  # who acts, for the audit log
            if rule.role is not None:  # an organization's route: its views act as the organization
                if second_factor_missing(request):  # the organization requires one; this person has none
                    return _second_factor_first(request, drf)
                request.user = resolved.account
        if drf:
            return None
        if not signed_in:
            login_url = reverse("admin:login") if rule.kind is Kind.STAFF else settings.LOGIN_URL
            return redirect_to_login(request.get_full_path(), login_url)
        refusal = session_refusal(rule, request)
        if refusal is None:
            return None
        if rule.kind is Kind.STAFF:  # the admin's door says what is missing (accounts/admin_site.py)
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        if isinstance(refusal, StepUpRequired):  # a page: to the confirm page, as a browser expects
            return _to_step_up(request)
        return _refused(request, refusal)


def _second_factor_first(request: HttpRequest, drf: bool) -> HttpResponse:
    """A member without a second factor in an organization that requires one: a problem for the
    API, the security page (to set one up) for a browser."""
    refusal = SecondFactorRequired()
    if drf or not wants_html(request):
        return JsonResponse(refusal.document(), status=refusal.status_code, content_type="application/problem+json")
    messages.info(request, _("This organization requires a second factor: set one up first."))
    return HttpResponseRedirect(reverse("dashboard:security"))


def _to_step_up(request: HttpRequest) -> HttpResponse:
    """To the "Confirm it's you" page, which comes back once confirmed: to this page for a GET,
    to the page the form was on for a POST (a POST is not replayed)."""
    back = request.get_full_path()
    if request.method != "GET":
        referer = urlsplit(request.META.get("HTTP_REFERER", ""))
        same_site = url_has_allowed_host_and_scheme(request.META.get("HTTP_REFERER", ""), {request.get_host()})
        back = referer.path if same_site and referer.path else back
    messages.info(request, _("Confirm it's you first, then do it again."))
    return HttpResponseRedirect(f"{settings.STEP_UP_URL}?{urlencode({'next': back})}")


def _refused(request: HttpRequest, problem) -> HttpResponse:
    if wants_html(request):
        return permission_denied(request, DjangoPermissionDenied(problem.detail))
    return JsonResponse(problem.document(), status=problem.status_code, content_type="application/problem+json")

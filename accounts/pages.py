"""Server-rendered account pages: register, sign in (password, then the emailed or app code),
the signed-in account page and sign-out. Plain forms, no scripts; each view calls the same
account services as the REST API and shows a Problem next to the field it names. Strict
Content-Security-Policy: our own stylesheet only, nothing inline."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import cast

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from accounts import invitations, passwords, security_links, sessions, teams
from accounts.models import User
from accounts.selectors import account_summary
from core.problems import Problem
from core.text import PlainTextForm

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
# The sign-in page also runs our own passkey script (navigator.credentials, then the auth API).
SIGN_IN_POLICY = CONTENT_SECURITY_POLICY + "; script-src 'self'; connect-src 'self'"


def strict_headers(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)  # a page may set its own
        response["X-Frame-Options"] = "DENY"
        response["Referrer-Policy"] = "same-origin"
        response["Cache-Control"] = "no-store"
        return response

    return wrapped


PASSWORD_HELP = gettext_lazy("At least 10 characters; not a common password.")


class RegisterForm(PlainTextForm):
    email = forms.EmailField(
        label=gettext_lazy("Email"), max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email"})
    )
    password = forms.CharField(
        label=gettext_lazy("Password"),
        max_length=1024,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text=PASSWORD_HELP,
    )


class SignInForm(PlainTextForm):
    email = forms.EmailField(
        label=gettext_lazy("Email"), max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "username"})
    )
    password = forms.CharField(
        label=gettext_lazy("Password"),
        max_length=1024,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )


class ForgotForm(PlainTextForm):
    email = forms.EmailField(
        label=gettext_lazy("Email"), max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email"})
    )


# Emailed codes have letters (accounts.codes); recovery codes too.
CODE_INPUT = {"autocomplete": "one-time-code", "autocapitalize": "characters", "spellcheck": "false"}


class ResetForm(PlainTextForm):
    code = forms.CharField(label=gettext_lazy("Code"), max_length=64, widget=forms.TextInput(attrs=CODE_INPUT))
    newPassword = forms.CharField(
        label=gettext_lazy("New password"),
        max_length=1024,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text=PASSWORD_HELP,
    )


class CodeForm(PlainTextForm):
    code = forms.CharField(label=gettext_lazy("Code"), max_length=64, widget=forms.TextInput(attrs=CODE_INPUT))


def _next_url(request: HttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, require_https=request.is_secure()):
        return target
    return "/account/"


def _show_problem(form: forms.Form, problem: Problem) -> int:
    """Put a Problem's field errors on the form (the rest on top); returns the HTTP status."""
    placed = False
    for field, message in problem.fields.items():
        if field in form.fields:
            form.add_error(field, message)
            placed = True
    if not placed:
        form.add_error(None, problem.detail)
    return problem.status_code


def _form_submit(
    request: HttpRequest, form: forms.Form, submit: Callable[[dict], HttpResponse]
) -> tuple[HttpResponse | None, int]:
    """The one form handler of these pages: on a valid POST, `submit(cleaned_data)` and its
    response; else no response and the page's status (400 for an invalid form, a Problem's own
    status with its message next to the field it names)."""
    if request.method != "POST":
        return None, 200
    if not form.is_valid():
        return None, 400
    try:
        return submit(form.cleaned_data), 200
    except Problem as problem:
        return None, _show_problem(form, problem)


def _page(request, template: str, context: dict, status: int = 200) -> HttpResponse:
    return render(request, f"accounts/{template}", {"next": _next_url(request), **context}, status=status)


def _signed_in(request, step: passwords.Step) -> HttpResponse:
    response = redirect(_next_url(request))
    if step.device_token:
        sessions.device_cookie_set(response, step.device_token)
    return response


@strict_headers
@require_http_methods(["GET", "POST"])
def register(request: HttpRequest) -> HttpResponse:
    form = RegisterForm(request.POST or None)

    def submit(data: dict) -> HttpResponse:
        passwords.password_register_begin(
            request, email=data["email"], password=data["password"], client=sessions.client_of(request)
        )
        return redirect("register_code")

    done, status = _form_submit(request, form, submit)
    if done is not None:
        return done
    return _page(request, "register.html", {"form": form}, status)


@strict_headers
@require_http_methods(["GET", "POST"])
def register_code(request: HttpRequest) -> HttpResponse:
    form = CodeForm(request.POST or None)

    def submit(data: dict) -> HttpResponse:
        step = passwords.password_register_complete(request, code=data["code"], client=sessions.client_of(request))
        return _signed_in(request, step)

    done, status = _form_submit(request, form, submit)
    if done is not None:
        return done
    pending = sessions.pending_get(request, flow="password_register") or {}
    return _page(
        request,
        "code.html",
        {
            "form": form,
            "title": _("Check your email"),
            "lead": _("We sent a code to finish creating your account."),
            "email": pending.get("email"),
        },
        status,
    )


@strict_headers
@require_http_methods(["GET", "POST"])
def sign_in(request: HttpRequest) -> HttpResponse:
    form = SignInForm(request.POST or None)

    def submit(data: dict) -> HttpResponse:
        passwords.password_login_begin(
            request, email=data["email"], password=data["password"], client=sessions.client_of(request)
        )
        return redirect(f"{reverse('login_code')}?{urlencode({'next': _next_url(request)})}")

    done, status = _form_submit(request, form, submit)
    if done is not None:
        return done
    response = _page(request, "sign_in.html", {"form": form}, status)
    response["Content-Security-Policy"] = SIGN_IN_POLICY
    return response


@strict_headers
@require_http_methods(["GET", "POST"])
def sign_in_code(request: HttpRequest) -> HttpResponse:
    form = CodeForm(request.POST or None)

    def submit(data: dict) -> HttpResponse:
        step = passwords.password_login_complete(request, code=data["code"], client=sessions.client_of(request))
        return _signed_in(request, step)

    done, status = _form_submit(request, form, submit)
    if done is not None:
        return done
    pending = sessions.pending_get(request, flow="password_login") or {}
    app = pending.get("second") == "totp"
    return _page(
        request,
        "code.html",
        {
            "form": form,
            "title": _("Authenticator code") if app else _("Check your email"),
            "lead": _("Enter the 6-digit code from your authenticator app, or a recovery code.")
            if app
            else _("We sent you a code to finish signing in."),
        },
        status,
    )


@strict_headers
def account(request: HttpRequest) -> HttpResponse:
    # Signed in: the authorization table sends a visitor to sign-in first (config/authorization.py).
    return _page(request, "account.html", {"account": account_summary(user=cast(User, request.user))})


@strict_headers
@require_POST
def sign_out(request: HttpRequest) -> HttpResponse:
    sessions.session_sign_out(request)
    return redirect("login")


@strict_headers
@require_http_methods(["GET", "POST"])
def forgot(request: HttpRequest) -> HttpResponse:
    """Forgotten password, step 1: the same answer for every address (no enumeration)."""
    form = ForgotForm(request.POST or None)

    def submit(data: dict) -> HttpResponse:
        passwords.password_forgot_begin(email=data["email"], client=sessions.client_of(request))
        sessions.pending_set(request, flow="password_forgot", email=data["email"])
        return redirect("forgot_code")

    done, status = _form_submit(request, form, submit)
    if done is not None:
        return done
    return _page(request, "forgot.html", {"form": form}, status)


@strict_headers
@require_http_methods(["GET", "POST"])
def forgot_code(request: HttpRequest) -> HttpResponse:
    """Step 2: the emailed code and a new password; every session of the account ends."""
    pending = sessions.pending_get(request, flow="password_forgot") or {}
    if not pending.get("email"):
        return redirect("forgot")
    form = ResetForm(request.POST or None)

    def submit(data: dict) -> HttpResponse:
        passwords.password_forgot_complete(
            email=pending["email"],
            code=data["code"],
            new_password=data["newPassword"],
            client=sessions.client_of(request),
        )
        sessions.pending_clear(request)
        return redirect(f"{reverse('login')}?reset=1")

    done, status = _form_submit(request, form, submit)
    if done is not None:
        return done
    return _page(request, "forgot_code.html", {"form": form, "email": pending["email"]}, status)


SECURITY_LINK_DONE = {
    "locked": gettext_lazy(
        "The account is locked: every session ended and every API key was revoked. "
        "Reset the password to sign in again, then check your passkeys, authenticator app and address book."
    ),
    "passkeyRemoved": gettext_lazy("The passkey was removed."),
    "apiKeyRevoked": gettext_lazy("The API key was revoked. It no longer works."),
}


@strict_headers
@require_http_methods(["GET", "POST"])
def security_link(request: HttpRequest, token: str) -> HttpResponse:
    """A security email's undo or lock link: GET asks to confirm (a mail scanner that follows
    links changes nothing), POST does it, once."""
    try:
        link = security_links.link_read(token)
    except Problem as problem:
        return _page(request, "security_link.html", {"problem": problem.detail}, status=problem.status_code)
    context = {"action": link.action, "email": link.user.email}
    if request.method == "POST":
        try:
            done = security_links.link_use(link, client=sessions.client_of(request))
        except Problem as problem:
            return _page(request, "security_link.html", context | {"problem": problem.detail}, problem.status_code)
        return _page(request, "security_link.html", context | {"done": SECURITY_LINK_DONE[done]})
    return _page(request, "security_link.html", context)


@strict_headers
@require_http_methods(["GET", "POST"])
def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """An invitation's link: GET shows it (a mail scanner changes nothing), POST accepts it, as
    the signed-in person or, signed out, by making the invited address's account."""
    person = request.user if request.user.is_authenticated else None
    signed_in = person is not None
    context = {"signed_in": signed_in, "email": person.email if person is not None else None}
    if request.method != "POST":
        return _page(request, "invitation.html", context)
    try:
        membership, created = invitations.invitation_accept(
            token=token, person=person, password=request.POST.get("password") or None
        )
    except Problem as problem:
        return _page(request, "invitation.html", context | {"problem": problem.detail}, problem.status_code)
    if created:
        return redirect(f"{reverse('login')}?joined=1")
    request.session[teams.ORGANIZATION_SESSION_KEY] = membership.organization_id  # work in it now
    return redirect("dashboard:overview")

"""What every dashboard page shares: the home redirect, sign-out and showing a Problem on a form."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from accounts.sessions import session_sign_out
from core.problems import Problem
from dashboard.security import page_headers

PAGE_SIZE = 20


def home(request: HttpRequest) -> HttpResponse:
    """`/`: a merchant goes to the overview, a visitor to sign-in."""
    if request.user.is_authenticated:
        return page_headers(redirect("dashboard:overview"))
    return page_headers(redirect(settings.LOGIN_URL))


@require_POST
def signout(request: HttpRequest) -> HttpResponse:
    session_sign_out(request)
    return page_headers(redirect(settings.LOGIN_URL))


def show_problem(form, problem: Problem) -> None:
    """A domain Problem next to the field it names (or at the top of the form)."""
    placed = False
    for field, message in problem.fields.items():
        name = form.field_for(field) if hasattr(form, "field_for") else (field if field in form.fields else None)
        if name:
            form.add_error(name, message)
            placed = True
    if not placed:
        form.add_error(None, problem.detail)

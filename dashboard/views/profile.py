"""The dashboard's Profile page: what payers see (name, logo, support contact) and how the
account reads amounts and times. A thin caller of `accounts.profiles.merchant_profile_update`,
the door the API uses too."""

from __future__ import annotations

from typing import cast

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.profiles import (
    LOGO_MAX_BYTES,
    merchant_profile_get,
    merchant_profile_update,
)
from core.problems import Problem
from core.text import PlainTextForm
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import show_problem
from payments.rates.fiat import FIAT_CURRENCIES

FIELDS = ("display_name", "support_email", "support_url", "display_currency", "time_zone", "language")
# The form's own field names, so a Problem from the door lands next to its input.
FORM_NAMES = {name: name for name in (*FIELDS, "logo")}


class ProfileForm(PlainTextForm):
    display_name = forms.CharField(
        label=gettext_lazy("Name payers see"),
        max_length=80,
        required=False,
        help_text=gettext_lazy("Shown on pay pages, receipts and PDFs. Empty: the deployment's name."),
    )
    logo = forms.FileField(
        label=gettext_lazy("Logo"),
        required=False,
        help_text=gettext_lazy("PNG, JPEG, WebP or GIF, at most 256 KB; shown at most 256 pixels wide."),
        widget=forms.ClearableFileInput(attrs={"accept": "image/png,image/jpeg,image/webp,image/gif"}),
    )
    remove_logo = forms.BooleanField(label=gettext_lazy("Remove the logo"), required=False)
    support_email = forms.CharField(label=gettext_lazy("Support email"), max_length=254, required=False)
    support_url = forms.CharField(
        label=gettext_lazy("Support page"),
        max_length=300,
        required=False,
        help_text=gettext_lazy("An https:// address where payers can reach you."),
    )
    display_currency = forms.ChoiceField(
        label=gettext_lazy("Display currency"), choices=[(c, c) for c in FIAT_CURRENCIES]
    )
    time_zone = forms.CharField(
        label=gettext_lazy("Time zone"),
        max_length=64,
        help_text=gettext_lazy("An IANA name such as Europe/Berlin or America/New_York."),
    )
    language = forms.ChoiceField(label=gettext_lazy("Language"), choices=())

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["language"]).choices = [(code, name) for code, name in settings.LANGUAGES]


@merchant_page
def profile(request: MerchantRequest) -> HttpResponse:
    current = merchant_profile_get(user=request.user)
    initial = {name: getattr(current, name) for name in FIELDS}
    if request.method != "POST":
        return render(request, "dashboard/profile.html", {"form": ProfileForm(initial=initial), "profile": current})
    form = ProfileForm(request.POST, request.FILES, initial=initial)
    if form.is_valid():
        data = form.cleaned_data
        extra: dict = {}  # no logo argument keeps the current one
        if data.get("remove_logo"):
            extra["logo"] = None
        elif upload := data.get("logo"):
            if upload.size > LOGO_MAX_BYTES:
                form.add_error("logo", _("The logo is at most %(kb)s KB.") % {"kb": LOGO_MAX_BYTES // 1024})
                return render(request, "dashboard/profile.html", {"form": form, "profile": current}, status=400)
            extra["logo"] = upload.read()
        try:
            changes = {name: data[name] for name in FIELDS}
            merchant_profile_update(user=request.user, changes=changes, names=FORM_NAMES, **extra)
        except Problem as problem:
            show_problem(form, problem)
        else:
            messages.success(request, _("Saved."))
            return redirect("dashboard:profile")
    return render(request, "dashboard/profile.html", {"form": form, "profile": current}, status=400)

"""Dashboard: receiving wallets (a fresh Bitcoin address per draft from the merchant's descriptor)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.modes import livemode_of
from core.problems import Problem
from dashboard.exports import exportable
from dashboard.forms import ReceivingWalletForm
from dashboard.lists import RECEIVING_WALLETS
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import show_problem
from wallets.api.edge import wallet_json
from wallets.descriptors import PrivateKeyRefused, private_key_check
from wallets.services import (
    receiving_wallet_archive,
    receiving_wallet_create,
    receiving_wallet_get,
)


@merchant_page
@exportable(RECEIVING_WALLETS)
def receiving_wallets(request: MerchantRequest) -> HttpResponse:
    form = ReceivingWalletForm(livemode=livemode_of(request.user))
    if request.method == "POST":
        try:
            # Before the form reads it: a refused private key is never rendered back into the page.
            private_key_check({k: v for k, v in request.POST.items() if k != "csrfmiddlewaretoken"})
        except PrivateKeyRefused as refused:
            messages.error(request, refused.detail)  # and the form stays empty
        else:
            form = ReceivingWalletForm(request.POST, livemode=livemode_of(request.user))
            if form.is_valid():
                data = form.cleaned_data
                try:
                    receiving_wallet_create(
                        user=request.user,
                        network=data["network"],
                        descriptor=data["descriptor"],
                        script_type=data["script_type"] or None,
                        label=data["label"],
                    )
                    messages.success(
                        request, _("Receiving wallet added: compare its first addresses with your wallet's.")
                    )
                    return redirect("dashboard:receiving_wallets")
                except Problem as problem:
                    show_problem(form, problem)
    wallets = [wallet_json(w) for w in RECEIVING_WALLETS.filtered(request)]
    return render(request, "dashboard/receiving_wallets.html", {"form": form, "wallets": wallets})


@merchant_page
@require_POST
def receiving_wallet_archive_view(request: MerchantRequest, wallet_id) -> HttpResponse:
    receiving_wallet_archive(wallet=receiving_wallet_get(user=request.user, wallet_id=wallet_id))
    messages.success(request, _("Receiving wallet archived: it gives no more addresses."))
    return redirect("dashboard:receiving_wallets")

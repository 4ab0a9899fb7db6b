"""The dashboard's refund form. Field names are the API's, so a Problem's field lands next to
its input (the amount is typed in whole units of the asset and sent as base units)."""

from __future__ import annotations

from typing import cast

from django import forms
from django.utils.translation import gettext_lazy as _

from core.text import PlainTextForm
from payments.enums import Currency, Network
from payments.registry import NETWORKS
from refunds.services import MAX_EXPIRY_HOURS


class RefundForm(PlainTextForm):
    kind = forms.ChoiceField(
        label=_("How much"),
        choices=[
            ("full", _("All that is left of the payment")),
            ("exact", _("An exact amount of the asset")),
            ("fiat", _("An amount in a fiat currency")),
        ],
        widget=forms.RadioSelect,
        initial="full",
    )
    currency = forms.ChoiceField(label=_("Refund in"), choices=[(c, c) for c in Currency.values])
    network = forms.ChoiceField(label=_("On network"), choices=Network.choices)
    amount = forms.DecimalField(
        label=_("Amount of the asset"), max_digits=30, decimal_places=18, required=False, min_value=0
    )
    fiatCurrency = forms.CharField(label=_("Fiat currency"), max_length=3, required=False)
    fiatAmount = forms.DecimalField(label=_("Fiat amount"), max_digits=20, decimal_places=8, required=False)
    reason = forms.CharField(label=_("Reason (the customer sees it)"), max_length=500, required=False)
    customerEmail = forms.EmailField(
        label=_("Customer's email"), required=False, help_text=_("Optional: we email them the claim link")
    )
    expiryHours = forms.IntegerField(
        label=_("Claim within (hours)"), min_value=1, max_value=MAX_EXPIRY_HOURS, initial=24 * 14
    )

    # The service names the API's fields; these are where they show on this form.
    FIELDS: dict[str, str | None] = {"amountSats": "amount", "full": "kind", "draftId": None}

    def __init__(self, *args, paid_on: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        # A refund pays on its payment's side (refunds.services.network_side_check): a payment on
        # a test network (every test-mode payment) offers test networks only, one on a main
        # network main networks only.
        if paid_on in NETWORKS:
            test_side = NETWORKS[paid_on].is_testnet
            cast(forms.ChoiceField, self.fields["network"]).choices = [
                (value, label) for value, label in Network.choices if NETWORKS[value].is_testnet == test_side
            ]
            self.fields["network"].error_messages["invalid_choice"] = (
                _("This payment was made on a test network, so it is refunded on a test network: pick one.")
                if test_side
                else _("This payment was made on a main network, so it is refunded on a main network: pick one.")
            )

    def field_for(self, name: str) -> str | None:
        shown = self.FIELDS.get(name, name)
        return shown if shown is not None and shown in self.fields else None

    def clean(self):
        super().clean()
        data = self.cleaned_data
        kind = data.get("kind")
        if kind == "exact" and not data.get("amount"):
            self.add_error("amount", _("Give the amount."))
        if kind == "fiat":
            if not data.get("fiatCurrency"):
                self.add_error("fiatCurrency", _("Name the fiat currency."))
            if data.get("fiatAmount") is None:
                self.add_error("fiatAmount", _("Give the amount."))
        return data

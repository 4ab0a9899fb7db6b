"""The create-draft form (and a recurring template's draft): choices that fit together.

The currency and method lists are filtered by the network on the server (a form posted with
"Update choices" comes back with the lists that fit the chosen network), and each option
carries the networks (or assets) it belongs to, so app.js can filter them as the merchant
picks without a round trip. Amounts are typed in the asset's units and turned into base units
here; fiat currencies are the supported ISO codes, offered as a searchable list.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import cast

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from core.problems import Problem
from core.text import PlainTextForm
from payments.enums import Method, Network
from payments.rates.fiat import FIAT_CURRENCIES
from payments.registry import NETWORKS, Asset, all_assets, get_asset, to_base_units

BLANK = [("", "—")]


class TaggedSelect(forms.Select):
    """A select whose options carry data attributes (`{value: {"data-networks": "Base Solana"}}`)."""

    def __init__(self, *args, option_data: dict[str, dict[str, str | bool]] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.option_data = option_data or {}

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex=subindex, attrs=attrs)
        option["attrs"].update(self.option_data.get(str(value), {}))
        return option


def mode_networks(*, livemode: bool, among: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """The networks a dashboard form offers, in the order of `Network`: the enabled ones (or
    those of `among`); in test mode the test networks only, so a form there cannot pick a main
    network and its first choice, the default, is a test network (accounts.modes)."""
    among = settings.ENABLED_NETWORKS if among is None else list(among)
    return [
        (value, label)
        for value, label in Network.choices
        if value in among and (livemode or (value in NETWORKS and NETWORKS[value].is_testnet))
    ]


TEST_NETWORKS_ONLY = _("Test mode uses test networks only: pick one from the list.")


def offer_networks(field: forms.Field, networks: list[tuple[str, str]], *, livemode: bool) -> None:
    """A network select offering `networks`, the first one chosen; in test mode a main network
    posted anyway is refused in the merchant's words (they switched test mode on)."""
    cast(forms.ChoiceField, field).choices = networks
    field.initial = networks[0][0] if networks else None
    if not livemode:
        field.error_messages["invalid_choice"] = TEST_NETWORKS_ONLY


def _assets() -> list[Asset]:
    return [a for a in all_assets() if a.network in settings.ENABLED_NETWORKS]


def currencies_on(network: str | None) -> list[str]:
    assets = _assets()
    return sorted({a.currency for a in assets if network is None or a.network == network})


def methods_of(network: str | None, currency: str | None) -> list[str]:
    found: set[str] = set()
    for a in _assets():
        if (network is None or a.network == network) and (currency is None or a.currency == currency):
            found.update(a.methods)
    return [m for m in Method.values if m in found]


class CreateDraftForm(PlainTextForm):
    network = forms.ChoiceField(label=_("Network"))
    currency = forms.ChoiceField(label=_("Currency"))
    paymentMethod = forms.ChoiceField(label=_("Method"), required=False, help_text=_("Empty: the network's default"))
    receiverAddress = forms.CharField(
        label=_("Receiving address"),
        max_length=320,
        required=False,
        widget=forms.TextInput(attrs={"list": "receiving-addresses", "autocomplete": "off"}),
        help_text=_("Pick one from your address book, or leave empty for your default address on this network"),
    )
    bolt11 = forms.CharField(
        label=_("Lightning invoice (BOLT11)"),
        max_length=4096,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "autocomplete": "off", "spellcheck": "false"}),
        help_text=_("The invoice fixes the amount; or give a Lightning address instead"),
    )
    lightningAddress = forms.CharField(
        label=_("Lightning address"),
        max_length=320,
        required=False,
        widget=forms.TextInput(attrs={"autocomplete": "off", "placeholder": "name@example.com"}),
        help_text=_("Its server makes an invoice for the amount below"),
    )
    pricing = forms.ChoiceField(
        label=_("Price"),
        choices=[("fiat", _("In a fiat currency")), ("exact", _("Exact amount of the asset"))],
        widget=forms.RadioSelect,
        initial="fiat",
    )
    fiatCurrency = forms.CharField(
        label=_("Fiat currency"),
        max_length=3,
        required=False,
        initial="USD",
        widget=forms.TextInput(attrs={"list": "fiat-currencies", "autocomplete": "off", "class": "short"}),
        help_text=_("ISO code; type to search the list"),
    )
    fiatAmount = forms.DecimalField(label=_("Fiat amount"), max_digits=20, decimal_places=8, required=False)
    amount = forms.DecimalField(
        label=_("Amount of the asset"),
        max_digits=40,
        decimal_places=18,
        min_value=Decimal("0"),
        required=False,
        help_text=_("In whole units of the asset, such as 0.0025 BTC or 25 USDC"),
    )
    memo = forms.CharField(label=_("Memo"), max_length=500, required=False)
    expiryHours = forms.IntegerField(label=_("Expires after (hours)"), min_value=1, max_value=720, initial=24)

    def __init__(self, *args, livemode: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        networks = mode_networks(livemode=livemode)
        offer_networks(self.fields["network"], networks, livemode=livemode)
        network = self._chosen("network") or (networks[0][0] if networks else None)
        currency = self._chosen("currency")
        by_currency: dict[str, list[str]] = {}
        by_method: dict[str, list[str]] = {}
        for asset in _assets():
            by_currency.setdefault(asset.currency, []).append(asset.network)
            for method in asset.methods:
                by_method.setdefault(method, []).append(f"{asset.currency}@{asset.network}")
        # Every option is rendered (app.js filters them as the merchant picks); the ones that do
        # not fit the chosen network are disabled, so without JavaScript they cannot be picked
        # until "Update choices" brings the lists of another network.
        fitting = currencies_on(network)
        self.fields["currency"].widget = TaggedSelect(
            option_data={
                c: {"data-networks": " ".join(n), **({} if c in fitting else {"disabled": True, "hidden": True})}
                for c, n in by_currency.items()
            }
        )
        cast(forms.ChoiceField, self.fields["currency"]).choices = [
            (c, c) for c in currencies_on(None)
        ]  # after the widget: it takes them
        usable = methods_of(network, currency if currency in fitting else None)
        self.fields["paymentMethod"].widget = TaggedSelect(
            option_data={
                m: {"data-assets": " ".join(a), **({} if m in usable else {"disabled": True, "hidden": True})}
                for m, a in by_method.items()
            }
        )
        cast(forms.ChoiceField, self.fields["paymentMethod"]).choices = BLANK + [
            (m, label) for m, label in Method.choices if m in by_method
        ]
        self.lightning = self._chosen("paymentMethod") == Method.LIGHTNING

    def _chosen(self, name: str) -> str | None:
        if self.is_bound:
            return self.data.get(self.add_prefix(name)) or None
        return self.initial.get(name) or self.fields[name].initial or None

    def clean_fiatCurrency(self) -> str | None:
        code = (self.cleaned_data.get("fiatCurrency") or "").strip().upper()
        if code and code not in FIAT_CURRENCIES:
            raise forms.ValidationError(_("Not a supported currency: pick one from the list (e.g. EUR)."))
        return code or None

    def clean(self):
        super().clean()
        data = self.cleaned_data
        lightning = data.get("paymentMethod") == Method.LIGHTNING or bool(data.get("bolt11"))
        if not lightning:
            data["bolt11"] = data["lightningAddress"] = None
        data["amountSats"] = None
        if lightning and not data.get("bolt11") and not data.get("lightningAddress"):
            self.add_error("bolt11", _("Paste the Lightning invoice, or give a Lightning address."))
        if lightning and data.get("bolt11"):
            data["fiatCurrency"] = data["fiatAmount"] = None  # the invoice fixes the amount
            return data
        if data.get("pricing") == "fiat":
            if not data.get("fiatCurrency") and "fiatCurrency" not in self.errors:
                self.add_error("fiatCurrency", _("Name the fiat currency."))
            if data.get("fiatAmount") is None:
                self.add_error("fiatAmount", _("Give the amount."))
        else:
            data["fiatCurrency"] = data["fiatAmount"] = None
            if data.get("amount") is None:
                self.add_error("amount", _("Give the amount of the asset."))
            elif data.get("network") and data.get("currency"):
                try:
                    asset = get_asset(data["currency"], data["network"])
                    data["amountSats"] = to_base_units(data["amount"], asset)
                except Problem as problem:
                    wrong = "currency" if problem.code == "unsupported_combination" else "amount"
                    self.add_error(wrong, problem.detail)
                else:
                    if data["amountSats"] <= 0:
                        self.add_error("amount", _("The amount must be more than zero."))
        return data

    def field_for(self, api_field: str) -> str | None:
        """A domain Problem's field (the API's name) as this form's field."""
        name = {"amountSats": "amount", "addressBookId": "receiverAddress"}.get(api_field, api_field)
        return name if name in self.fields else None

"""Dashboard forms. Field names are the API's (camelCase) so a domain Problem's field errors
land next to the right input without a mapping table."""

from __future__ import annotations

from typing import cast

from django import forms
from django.conf import settings
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from accounts.scopes import Scope
from core.ids import short_id
from core.text import PlainTextForm
from dashboard.draft_forms import TEST_NETWORKS_ONLY, CreateDraftForm, TaggedSelect, mode_networks, offer_networks
from drafts.enums import DraftStatus
from drafts.settlement import SETTLEMENT_CURRENCIES
from payments import formatting
from payments.enums import Currency, Method, Network
from payments.rates.fiat import FIAT_CURRENCIES
from payments.registry import all_assets, format_amount, get_asset
from webhooks.models import EventType

BLANK = [("", "—")]


class DateInput(forms.DateInput):
    input_type = "date"


class DraftFilterForm(PlainTextForm):
    status = forms.ChoiceField(label=_("Status"), choices=[*BLANK, *DraftStatus.choices], required=False)
    network = forms.ChoiceField(label=_("Network"), choices=BLANK + Network.choices, required=False)
    method = forms.ChoiceField(label=_("Method"), choices=[*BLANK, *Method.choices], required=False)
    currency = forms.ChoiceField(label=_("Currency"), choices=BLANK + [(c, c) for c in Currency.values], required=False)
    q = forms.CharField(
        label=_("Search"), max_length=200, required=False, help_text=_("Memo, address, tx id, order id")
    )
    page = forms.IntegerField(min_value=1, max_value=1_000_000, required=False)
    superseded = forms.BooleanField(label=_("Include drafts a payer switched away from"), required=False)

    def __init__(self, *args, livemode: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        # The day range of GET /api/v1/drafts (`from`, `to`), days of the account's time zone.
        self.fields["from"] = forms.DateField(label=_("From"), required=False, widget=DateInput)
        self.fields["to"] = forms.DateField(label=_("To"), required=False, widget=DateInput)
        if not livemode:  # test drafts are on test networks only
            networks = BLANK + mode_networks(livemode=False, among=Network.values)
            offer_networks(self.fields["network"], networks, livemode=False)  # first: every network


class WebhookForm(PlainTextForm):
    url = forms.URLField(label=_("Endpoint URL"), max_length=2048, assume_scheme="https", help_text=_("HTTPS, public"))
    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=[(v, format_html("<code>{}</code>", v)) for v in EventType.values if v != EventType.TEST],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text=_("None ticked: every event of the specification"),
    )


class ApiKeyForm(PlainTextForm):
    name = forms.CharField(label=_("Name"), max_length=100)
    scopes = forms.MultipleChoiceField(
        label=_("Scopes"), choices=Scope.choices, widget=forms.CheckboxSelectMultiple, initial=["drafts:read"]
    )
    expiresInDays = forms.IntegerField(
        label=_("Expires after (days)"), min_value=1, max_value=3650, required=False, help_text=_("Empty: never")
    )
    testMode = forms.BooleanField(
        label=_("Test key"),
        required=False,
        help_text=_("Sees and makes only test objects, on test networks; payments simulated on demand"),
    )


class SettleForm(PlainTextForm):
    currency = forms.ChoiceField(label=_("Pay in"), choices=[(c, c) for c in SETTLEMENT_CURRENCIES])
    network = forms.ChoiceField(label=_("Network"), choices=Network.choices)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Only the networks the operator takes settlements on (an enabled network with a fee
        # address), the first one chosen, with an asset it carries. (Test mode accrues no fees,
        # so this form is never shown there.)
        allowed = [
            (value, label)
            for value, label in Network.choices
            if value in settings.ENABLED_NETWORKS and settings.PLATFORM_FEE_ADDRESSES.get(value)
        ]
        if allowed:
            cast(forms.ChoiceField, self.fields["network"]).choices = allowed
            first = allowed[0][0]
            self.fields["network"].initial = first
            self.fields["currency"].initial = next(
                (c for c in SETTLEMENT_CURRENCIES if _carries(c, first)), SETTLEMENT_CURRENCIES[0]
            )


def _carries(currency: str, network: str) -> bool:
    return any(a.currency == currency and a.network == network for a in all_assets())


OPTION_SLOTS = 4
PAY_CURRENCIES = [("", "—"), ("BTC", "BTC"), ("USDC", "USDC"), ("USDT", "USDT"), ("EURC", "EURC")]


class PaymentRequestForm(PlainTextForm):
    """A pay link: a fiat amount and up to four ways to pay it (asset, network, receiving address).
    Field names follow the API so `options[0].receiverAddress` lands on `option0_receiverAddress`."""

    fiatCurrency = forms.CharField(
        label=_("Currency"), max_length=3, initial="USD", help_text=_("ISO code; type to search")
    )
    fiatAmount = forms.DecimalField(label=_("Amount"), max_digits=20, decimal_places=8)
    orderId = forms.CharField(label=_("Order id"), max_length=200, required=False)
    memo = forms.CharField(label=_("Memo"), max_length=500, required=False, help_text=_("Shown to the payer"))
    returnUrl = forms.CharField(
        label=_("Return link"),
        max_length=2000,
        required=False,
        help_text=_("https:// — shown to the payer as “Back to …” once paid or cancelled"),
    )
    expiryHours = forms.IntegerField(label=_("Open for (hours)"), min_value=1, max_value=720, initial=72)

    def __init__(self, *args, livemode: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        networks = mode_networks(livemode=livemode)
        carriers: dict[str, list[str]] = {}
        for asset in all_assets():
            carriers.setdefault(asset.currency, []).append(asset.network)
        self.fields["fiatCurrency"].widget.attrs.update({"list": "fiat-currencies", "autocomplete": "off"})
        for i in range(OPTION_SLOTS):
            self.fields[f"option{i}_currency"] = forms.ChoiceField(
                label=_("Asset"),
                choices=PAY_CURRENCIES,
                required=False,
                widget=TaggedSelect(option_data={c: {"data-networks": " ".join(n)} for c, n in carriers.items()}),
            )
            self.fields[f"option{i}_network"] = forms.ChoiceField(
                label=_("Network"), choices=BLANK + networks, required=False
            )
            if not livemode:
                self.fields[f"option{i}_network"].error_messages["invalid_choice"] = TEST_NETWORKS_ONLY
            self.fields[f"option{i}_receiverAddress"] = forms.CharField(
                label=_("Receiving address"),
                max_length=320,
                required=False,
                widget=forms.TextInput(attrs={"list": "receiving-addresses", "autocomplete": "off"}),
                help_text=_("Empty: your default receiving address on the network") if i == 0 else "",
            )
        if not livemode and networks:  # the first way to pay starts on a test network
            self.fields["option0_network"].initial = networks[0][0]

    @property
    def option_rows(self):
        return [
            (i, self[f"option{i}_currency"], self[f"option{i}_network"], self[f"option{i}_receiverAddress"])
            for i in range(OPTION_SLOTS)
        ]

    def options(self) -> list[dict[str, str]]:
        data = self.cleaned_data
        return [
            {
                "currency": data[f"option{i}_currency"],
                "network": data[f"option{i}_network"],
                "receiverAddress": data[f"option{i}_receiverAddress"].strip(),
            }
            for i in range(OPTION_SLOTS)
            if data.get(f"option{i}_currency") or data.get(f"option{i}_receiverAddress")
        ]

    def clean_fiatCurrency(self) -> str:
        code = self.cleaned_data["fiatCurrency"].strip().upper()
        if code not in FIAT_CURRENCIES:
            raise forms.ValidationError(_("Not a supported currency: pick one from the list (e.g. EUR)."))
        return code

    def clean(self):
        super().clean()
        data = self.cleaned_data
        for i in range(OPTION_SLOTS):
            row = [data.get(f"option{i}_{name}") for name in ("currency", "network", "receiverAddress")]
            if any(row) and not all(row[:2]):  # an empty address: the default on the network
                self.add_error(f"option{i}_network", _("Give the asset and the network."))
        return data

    def field_for(self, api_field: str) -> str | None:
        """`options[1].receiverAddress` -> `option1_receiverAddress`."""
        if api_field.startswith("options["):
            index, _sep, name = api_field[len("options[") :].partition("]")
            name = name.lstrip(".") or "receiverAddress"
            return f"option{index}_{name}" if f"option{index}_{name}" in self.fields else "option0_currency"
        return api_field if api_field in self.fields else None


class PasswordChangeForm(PlainTextForm):
    currentPassword = forms.CharField(
        label=_("Current password"),
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        required=False,
    )
    newPassword = forms.CharField(
        label=_("New password"), widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )


class CodeForm(PlainTextForm):
    code = forms.CharField(
        label=_("Code from your authenticator app"),
        max_length=20,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
    )


class DeleteAccountForm(PlainTextForm):
    confirm = forms.BooleanField(label=_("Yes, delete my account. Open drafts and pay links are cancelled."))


class NotificationsForm(PlainTextForm):
    emailEnabled = forms.BooleanField(
        label=_("Email me when payments are seen, confirmed or need attention"), required=False
    )
    attentionDigest = forms.BooleanField(
        label=_("Email me once a day what needs attention (nothing when nothing does)"), required=False
    )


class AttachForm(PlainTextForm):
    draftId = forms.ChoiceField(label=_("Draft it pays"))
    acceptAmount = forms.BooleanField(label=_("Accept the amount even if it differs by more than 10%"), required=False)

    def __init__(self, *args, drafts=(), **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["draftId"]).choices = [(str(d.id), _attach_label(d)) for d in drafts]


def _attach_label(draft) -> str:
    """ "9c1e3f2a · 25.000000 USDC (€49.90) · Pending · Invoice 7": what tells drafts apart."""
    amount = f"{format_amount(draft.amount_base_units, get_asset(draft.currency, draft.network))} {draft.currency}"
    if draft.fiat_amount is not None and draft.fiat_currency:
        amount += f" ({formatting.fiat_amount(draft.fiat_amount, draft.fiat_currency)})"
    parts = [short_id(draft.id), amount, draft.get_status_display()]
    if draft.memo:
        parts.append(draft.memo)
    return " · ".join(parts)


class AddressBookForm(PlainTextForm):
    label = forms.CharField(label=_("Label"), max_length=200, required=False)
    network = forms.ChoiceField(label=_("Network"), choices=Network.choices)
    address = forms.CharField(label=_("Address"), max_length=128)
    direction = forms.ChoiceField(
        label=_("Direction"), choices=[("Receiving", _("Receiving")), ("Sending", _("Sending"))]
    )
    verified = forms.BooleanField(label=_("I have checked this address"), required=False)
    is_default = forms.BooleanField(
        label=_("Default receiving address on this network (drafts and pay links without an address use it)"),
        required=False,
    )

    def __init__(self, *args, livemode: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        networks = mode_networks(livemode=livemode, among=Network.values)
        offer_networks(self.fields["network"], networks, livemode=livemode)

    def field_for(self, api_field: str) -> str | None:
        return {"isDefault": "is_default"}.get(api_field, api_field if api_field in self.fields else None)


class RecurringTemplateForm(CreateDraftForm):
    """A template: when to run, and the draft each run makes (the create-draft fields)."""

    name = forms.CharField(label=_("Name"), max_length=200, required=False)
    interval = forms.ChoiceField(
        label=_("Every"), choices=[("Daily", _("Day")), ("Weekly", _("Week")), ("Monthly", _("Month"))]
    )
    firstRunAt = forms.DateTimeField(
        label=_("First run"),
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text=_("In the time zone below; empty: now"),
    )
    timezone = forms.CharField(label=_("Time zone"), max_length=64, initial="UTC")

    def field_for(self, api_field: str) -> str | None:
        """The template's draft fields come back as `draft.receiverAddress`."""
        return super().field_for(api_field.removeprefix("draft."))


class PayLinkPreferenceForm(PlainTextForm):
    quietCheckoutDrafts = forms.BooleanField(
        label=_(
            "Quiet pay-link drafts: no draft.created when a payer picks a way to pay, no draft.cancelled when "
            "they switch to another"
        ),
        required=False,
    )


BITCOIN_NETWORKS = ("Mainnet", "Testnet", "Signet", "Regtest")


class ReceivingWalletForm(PlainTextForm):
    """A receiving wallet: a Bitcoin network and the wallet's public descriptor (or xpub)."""

    label = forms.CharField(label=_("Label"), max_length=200, required=False)
    network = forms.ChoiceField(
        label=_("Network"),
        choices=[(n, label) for n, label in Network.choices if n in BITCOIN_NETWORKS],
    )
    descriptor = forms.CharField(
        label=_("Output descriptor or extended public key"),
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "autocomplete": "off"}),
        help_text=_(
            "Public only: wpkh(...), tr(...) or sh(wpkh(...)) ending in /0/* or /<0;1>/*, or an xpub, ypub or "
            "zpub (tpub, upub or vpub on test networks). Never a private key (xprv, tprv, WIF): it is refused."
        ),
    )
    script_type = forms.ChoiceField(
        label=_("Address type (for a bare xpub or tpub)"),
        required=False,
        choices=[
            ("", _("From the descriptor or key")),
            ("wpkh", _("Native SegWit (wpkh)")),
            ("tr", _("Taproot (tr)")),
            ("sh-wpkh", _("Nested SegWit (sh-wpkh)")),
        ],
    )

    def __init__(self, *args, livemode: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        networks = mode_networks(livemode=livemode, among=BITCOIN_NETWORKS)
        offer_networks(self.fields["network"], networks, livemode=livemode)

    def field_for(self, api_field: str) -> str | None:
        return {"scriptType": "script_type"}.get(api_field, api_field if api_field in self.fields else None)

"""API key scopes. No scope can move funds: the service never holds keys or funds."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Scope(models.TextChoices):
    DRAFTS_READ = "drafts:read", _("Read drafts and their status")
    DRAFTS_WRITE = "drafts:write", _("Create, cancel and requote drafts")
    PAYLINKS_READ = "paylinks:read", _("Read payment requests (pay links)")
    PAYLINKS_WRITE = "paylinks:write", _("Create and cancel payment requests")
    REFUNDS_READ = "refunds:read", _("Read refunds")
    REFUNDS_WRITE = "refunds:write", _("Issue, approve and cancel refunds (paid from your own wallet)")
    FEES_READ = "fees:read", _("Read the fee schedule and accrued fees")
    FEES_WRITE = "fees:write", _("Settle accrued fees")
    RATES_READ = "rates:read", _("Read exchange rates")
    TEMPLATES_MANAGE = "templates:manage", _("Manage recurring templates")
    ADDRESSBOOK_MANAGE = "addressbook:manage", _("Manage the address book")
    WALLETS_READ = "wallets:read", _("Read receiving wallets (public descriptors) and their addresses")
    WALLETS_WRITE = "wallets:write", _("Register and archive receiving wallets (public descriptors only)")
    WEBHOOKS_MANAGE = "webhooks:manage", _("Register, test and remove webhooks; send events again")
    EVENTS_READ = "events:read", _("Read the account's events and stream them (manage.py listen)")


ALL_SCOPES: list[str] = [scope.value for scope in Scope]

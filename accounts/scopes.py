"""API key scopes. No scope can move funds: the service never holds keys or funds."""

from django.db import models


class Scope(models.TextChoices):
    DRAFTS_READ = "drafts:read", "Read drafts and their status"
    DRAFTS_WRITE = "drafts:write", "Create, cancel and requote drafts"
    PAYLINKS_READ = "paylinks:read", "Read payment requests (pay links)"
    PAYLINKS_WRITE = "paylinks:write", "Create and cancel payment requests"
    REFUNDS_READ = "refunds:read", "Read refunds"
    REFUNDS_WRITE = "refunds:write", "Issue, approve and cancel refunds (paid from your own wallet)"
    FEES_READ = "fees:read", "Read the fee schedule and accrued fees"
    FEES_WRITE = "fees:write", "Settle accrued fees"
    RATES_READ = "rates:read", "Read exchange rates"
    TEMPLATES_MANAGE = "templates:manage", "Manage recurring templates"
    ADDRESSBOOK_MANAGE = "addressbook:manage", "Manage the address book"
    WALLETS_READ = "wallets:read", "Read receiving wallets (public descriptors) and their addresses"
    WALLETS_WRITE = "wallets:write", "Register and archive receiving wallets (public descriptors only)"
    WEBHOOKS_MANAGE = "webhooks:manage", "Register, test and remove webhooks"


ALL_SCOPES: list[str] = [scope.value for scope in Scope]

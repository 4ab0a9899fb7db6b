from django.contrib.admin.apps import AdminConfig


class AccountAdminConfig(AdminConfig):
    """django.contrib.admin with the site of accounts/admin_site.py (INSTALLED_APPS names this)."""

    default_site = "accounts.admin_site.AccountAdminSite"

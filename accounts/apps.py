from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts.emails import account_email_context
        from notifications.emails import email_context_provider

        # An account's emails show times in its own zone and amounts as people read them.
        email_context_provider(account_email_context)

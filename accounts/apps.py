from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts.emails import account_email_context
        from accounts.languages import account_language
        from accounts.teams import email_readers
        from notifications.emails import (
            email_account_language_provider,
            email_context_provider,
            email_recipients_provider,
        )

        # An account's emails show times in its own zone and amounts as people read them.
        email_context_provider(account_email_context)
        # An organization's emails go to the members whose role cares, each in their language.
        email_recipients_provider(email_readers)
        # An email to the account itself (a code, a security notice) reads in its language.
        email_account_language_provider(account_language)

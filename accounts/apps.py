from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts.profiles import merchant_profile_get
        from notifications.emails import account_email_context

        # An account's emails show times in its own zone.
        account_email_context(lambda user: {"timeZone": merchant_profile_get(user=user).time_zone})

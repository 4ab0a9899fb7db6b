from django.apps import AppConfig


class PaymentsConfig(AppConfig):
    name = "payments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Build the asset registry now, so a bad TOKEN_ADDRESSES stops `manage.py check`, the web
        # server and the workers at start (naming the variable) instead of failing every draft.
        from payments.registry import all_assets

        all_assets()

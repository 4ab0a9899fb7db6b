from django.apps import AppConfig


class ChainwatchConfig(AppConfig):
    name = "chainwatch"
    default_auto_field = "django.db.models.BigAutoField"

from django.apps import AppConfig


class FeesConfig(AppConfig):
    name = "fees"
    default_auto_field = "django.db.models.BigAutoField"

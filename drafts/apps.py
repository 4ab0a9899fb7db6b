from django.apps import AppConfig


class DraftsConfig(AppConfig):
    name = "drafts"
    default_auto_field = "django.db.models.BigAutoField"

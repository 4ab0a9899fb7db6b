from django.apps import AppConfig


class AttentionConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "attention"
    verbose_name = "Needs attention"

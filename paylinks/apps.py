from django.apps import AppConfig


class PaylinksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "paylinks"
    verbose_name = "Pay links"

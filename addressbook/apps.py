from django.apps import AppConfig


class AddressbookConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "addressbook"

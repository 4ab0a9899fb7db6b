from django.apps import AppConfig


class DraftsConfig(AppConfig):
    name = "drafts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from drafts import closure  # noqa: F401  (registers what account deletion does to drafts)

from django.apps import AppConfig


class PlatformConfig(AppConfig):
    """The platform itself: runtime guards (and the `notices` command). Listed last in INSTALLED_APPS."""

    name = "config"

    def ready(self) -> None:
        from config.runtime import apply_runtime_guards

        apply_runtime_guards()

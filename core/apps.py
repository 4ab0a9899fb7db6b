from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The shared base: runtime guards, the scheduler lease, the `rotate_encryption_keys` command.

    Its label stays `config`, the app this code first lived in, so the lease table (`config_lease`)
    and its migration history stay as they are. Listed last in INSTALLED_APPS."""

    name = "core"
    label = "config"

    def ready(self) -> None:
        from core.runtime import apply_runtime_guards
        from core.sql.driver import driver_tune

        driver_tune()
        apply_runtime_guards()

from django.apps import AppConfig
from django.contrib.staticfiles import apps as staticfiles


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


class StaticFilesConfig(staticfiles.StaticFilesConfig):
    """django.contrib.staticfiles, collecting only what a page of the service loads: not the
    assets of DRF's browsable API (the API answers JSON only) nor ReDoc's bundle (/swagger is the
    API's page), which every `collectstatic` would otherwise copy and compress (about 6 s of CPU
    at each start of `make run`; docs/decisions.md)."""

    ignore_patterns = [*staticfiles.StaticFilesConfig.ignore_patterns, "rest_framework", "redoc"]

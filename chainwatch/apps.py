from django.apps import AppConfig


class ChainwatchConfig(AppConfig):
    name = "chainwatch"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from chainwatch.unmatched import simulated_transfer_report
        from drafts.transfers import unmatched_recorder

        # A test-mode second payment is reported as a watcher reports one (drafts/simulation.py).
        unmatched_recorder(simulated_transfer_report)

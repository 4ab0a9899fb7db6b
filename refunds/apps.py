from django.apps import AppConfig


class RefundsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "refunds"
    verbose_name = "Refunds"

    def ready(self) -> None:
        from drafts.services import on_draft_confirmed
        from refunds import closure  # noqa: F401  (registers what account deletion does to refunds)
        from refunds.services import refund_payout_confirmed

        # A refund becomes Paid in the transaction that confirms its payout draft.
        on_draft_confirmed(refund_payout_confirmed)

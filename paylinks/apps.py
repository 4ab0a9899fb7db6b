from django.apps import AppConfig


class PaylinksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "paylinks"
    verbose_name = "Pay links"

    def ready(self) -> None:
        from drafts.services import on_draft_confirmed
        from paylinks import closure  # noqa: F401  (registers what account deletion does to pay links)
        from paylinks.services import payment_request_draft_confirmed

        # A request becomes Paid in the transaction that confirms its draft.
        on_draft_confirmed(payment_request_draft_confirmed)

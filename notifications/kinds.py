"""The kinds of email the service sends. A kind names its templates under
templates/emails/ (`<name>_subject.txt`, `<name>.txt`, `<name>.html`) and says whether
the account's email preference may turn it off and whether its context holds a secret."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EmailKind:
    name: str
    # Notices about drafts can be turned off; codes and security notices always go out.
    optional: bool = False
    # The context holds a one-time secret (an emailed code): it is wiped once the email is
    # sent or given up, so the outbox never keeps it longer than delivery needs.
    secret: bool = False


DRAFT_EVENT = "draft_event"
TRANSFER_UNMATCHED = "transfer_unmatched"
WEBHOOK_DISABLED = "webhook_disabled"
EMAIL_CODE = "email_code"
SECURITY_NOTICE = "security_notice"
PAYMENT_REQUEST_PAID = "payment_request_paid"
PAYMENT_RECEIPT = "payment_receipt"
RECURRING_RUN_REFUSED = "recurring_run_refused"
REFUND_CLAIM_LINK = "refund_claim_link"
REFUND_CLAIMED = "refund_claimed"
REFUND_PAID = "refund_paid"

KINDS: dict[str, EmailKind] = {
    kind.name: kind
    for kind in (
        EmailKind(DRAFT_EVENT, optional=True),
        EmailKind(TRANSFER_UNMATCHED, optional=True),
        EmailKind(WEBHOOK_DISABLED),
        EmailKind(EMAIL_CODE, secret=True),
        EmailKind(SECURITY_NOTICE),
        EmailKind(PAYMENT_REQUEST_PAID, optional=True),
        # To a payer who asked for it on the pay page (no account, so no preference).
        EmailKind(PAYMENT_RECEIPT),
        EmailKind(RECURRING_RUN_REFUSED),
        # To the customer a refund is for (no account, so no preference): the claim link.
        EmailKind(REFUND_CLAIM_LINK),
        EmailKind(REFUND_CLAIMED, optional=True),
        EmailKind(REFUND_PAID, optional=True),
    )
}


def kind_get(name: str) -> EmailKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"Unknown email kind {name!r}; add it to notifications.kinds.KINDS") from None

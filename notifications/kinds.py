"""The kinds of email the service sends. A kind names its templates under
templates/emails/ (`<name>_subject.txt`, `<name>.txt`, `<name>.html`) and says whether
the account's email preference may turn it off, whether its context holds a secret, and which
members of the organization read it."""

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
    # An email about an organization goes to each member whose role grants this work
    # (accounts.roles.Work: "money", "developer", "admin"), each in their own language;
    # None: only to the account's own address.
    audience: str | None = None
    # Who reads it, which decides its language (notifications.emails.email_language): the
    # merchant's people ("merchant": the account's language once the dashboard is offered in it,
    # DASHBOARD_LANGUAGES), a customer ("customer": the language the payer chose), or the
    # operator ("operator": English).
    reader: str = "merchant"


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
# To OPERATOR_EMAIL: a network's endpoints disagree on a payment (chainwatch/quorum.py).
WATCHERS_DISAGREE = "watchers_disagree"
TEAM_INVITATION = "team_invitation"
# Once a day: what waits for the account (attention.digest); its own switch turns it off too.
ATTENTION_DIGEST = "attention_digest"

# The work (accounts.roles.Work) whose members read an organization's email.
MONEY, DEVELOPER = "money", "developer"
# Who reads an email (EmailKind.reader).
MERCHANT, CUSTOMER, OPERATOR = "merchant", "customer", "operator"

KINDS: dict[str, EmailKind] = {
    kind.name: kind
    for kind in (
        # Payments that need a look (amount mismatch, payment reverted...): who handles money.
        EmailKind(DRAFT_EVENT, optional=True, audience=MONEY),
        EmailKind(TRANSFER_UNMATCHED, optional=True, audience=MONEY),
        # An endpoint that failed and was disabled: who manages webhooks.
        EmailKind(WEBHOOK_DISABLED, audience=DEVELOPER),
        EmailKind(EMAIL_CODE, secret=True),
        EmailKind(SECURITY_NOTICE),
        EmailKind(PAYMENT_REQUEST_PAID, optional=True, audience=MONEY),
        # To a payer who asked for it on the pay page (no account, so no preference).
        EmailKind(PAYMENT_RECEIPT, reader=CUSTOMER),
        EmailKind(RECURRING_RUN_REFUSED, audience=MONEY),
        # To the customer a refund is for (no account, so no preference): the claim link.
        EmailKind(REFUND_CLAIM_LINK, reader=CUSTOMER),
        # A claimed refund waits for approval: who may approve refunds.
        EmailKind(REFUND_CLAIMED, optional=True, audience=MONEY),
        EmailKind(REFUND_PAID, optional=True, audience=MONEY),
        EmailKind(WATCHERS_DISAGREE, reader=OPERATOR),
        # To an invited address (no account yet, or not one of the organization's): the link.
        EmailKind(TEAM_INVITATION, secret=True),
        EmailKind(ATTENTION_DIGEST, optional=True, audience=MONEY),
    )
}


def kind_get(name: str) -> EmailKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"Unknown email kind {name!r}; add it to notifications.kinds.KINDS") from None

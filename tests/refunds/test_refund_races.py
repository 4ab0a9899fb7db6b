"""Refunds under concurrency and at account deletion."""

from __future__ import annotations

import pytest

from core.problems import Problem
from drafts.models import Draft
from refunds.closure import refunds_close_for_account
from refunds.models import Refund
from refunds.services import refund_approve, refund_claim, refund_issue
from tests.concurrency import run_at_once
from tests.refunds.conftest import CUSTOMER


@pytest.mark.django_db(transaction=True)
def test_refunds_issued_at_once_never_together_exceed_the_payment(owner, paid_draft):
    draft = paid_draft()  # 25 USDC

    def issue() -> str:
        try:
            refund_issue(user=owner, draft=Draft.objects.get(pk=draft.pk), amount_base_units=10_000_000)
            return "issued"
        except Problem as problem:
            return problem.code

    outcomes = run_at_once(4, issue)
    assert sorted(outcomes) == ["exceeds_refundable", "exceeds_refundable", "issued", "issued"]
    assert sum(r.share_base_units for r in Refund.objects.all()) == 20_000_000


@pytest.mark.django_db(transaction=True)
def test_two_approvals_at_once_make_one_payout(owner, paid_draft):
    refund = refund_issue(user=owner, draft=paid_draft(), full=True)
    refund_claim(token=refund.token, refund_address=CUSTOMER["Ethereum"])

    def approve() -> str:
        try:
            refund_approve(refund=Refund.objects.get(pk=refund.pk))
            return "approved"
        except Problem as problem:
            return problem.code

    assert sorted(run_at_once(2, approve)) == ["approve_not_allowed", "approved"]
    assert Draft.objects.filter(origin="Refund").count() == 1  # the loser's draft rolled back with it


@pytest.mark.django_db
def test_a_deleted_account_cancels_its_open_refunds_and_clears_personal_fields(owner, paid_draft):
    refund = refund_issue(user=owner, draft=paid_draft(), full=True, reason="Late", customer_email="c@example.com")
    refunds_close_for_account(user=owner, now=refund.created_at)
    refund.refresh_from_db()
    assert (refund.status, refund.customer_email, refund.reason) == ("Cancelled", None, None)

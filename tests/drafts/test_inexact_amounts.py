"""draft_payment_observed(amount_exact=False): an amount with a fraction below one base unit."""

import pytest

from drafts.enums import DraftStatus
from payments.enums import Currency
from tests.factories import draft_payment_observed, make_draft

pytestmark = pytest.mark.django_db


def test_an_amount_that_only_rounds_to_the_billed_one_is_a_mismatch_not_a_payment(owner):
    draft = make_draft(owner, currency=Currency.ETH, amount_base_units=1_000_000_000, required_confirmations=1)
    draft_payment_observed(
        draft_id=draft.id, tx_id="0xabc", received_base_units=1_000_000_000, confirmations=5, amount_exact=False
    )
    draft.refresh_from_db()
    assert draft.status == DraftStatus.AMOUNT_MISMATCH
    assert draft.amount_mismatch["receivedBaseUnits"] == 1_000_000_000


def test_an_exact_amount_is_still_a_payment_by_default(owner):
    draft = make_draft(owner, currency=Currency.ETH, amount_base_units=1_000_000_000, required_confirmations=1)
    draft_payment_observed(draft_id=draft.id, tx_id="0xabc", received_base_units=1_000_000_000, confirmations=1)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED

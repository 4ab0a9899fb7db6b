"""One payment, one draft: on a shared address a paid, expired or cancelled draft keeps its amount
for AMOUNT_RESERVATION_DAYS, so a payer who pays it again is reported on that draft (and to the
merchant as an unmatched transfer) and never pays the next draft of the same price; a transfer
near several drafts' amounts is reported, never guessed onto one of them."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from chainwatch.matching import match_network
from chainwatch.models import ObservedTransfer, UnmatchedTransfer
from chainwatch.networks import token_address
from drafts.enums import DraftStatus
from drafts.models import Draft
from tests.drafts.conftest import ADDRESSES
from webhooks.models import Event

pytestmark = pytest.mark.django_db

ADDRESS = ADDRESSES["Base"]
FIAT = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESS, "fiatCurrency": "USD", "fiatAmount": 12.34}
HEAD = 200  # block 100 and later are settled at this head
_blocks = iter(range(100, 150))


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.API_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}


def created(api_client, body: dict) -> Draft:
    response = api_client.post("/api/v1/drafts", {**body, "requiredConfirmations": 1}, format="json")
    assert response.status_code == 201, response.json()
    return Draft.objects.get(pk=response.json()["id"])


def sent(amount: int, txid: str) -> None:
    """A settled transfer to the shared address, then the watcher's matching pass."""
    ObservedTransfer.objects.create(
        network="Base",
        txid=txid,
        index=0,
        currency="USDC",
        token_address=token_address("Base", "USDC"),
        receiver_address=ADDRESS.lower(),
        amount_base_units=amount,
        block_height=next(_blocks),
        block_hash="0xblock",
    )
    match_network(network="Base", head=HEAD)


def test_paying_a_draft_twice_is_reported_on_it_and_never_pays_the_next_draft_of_that_price(api_client, owner):
    first = created(api_client, FIAT)
    sent(first.amount_base_units, "0xfirst")
    first.refresh_from_db()
    assert first.status == DraftStatus.CONFIRMED
    assert first.amount_held_until is not None

    after = created(api_client, FIAT)  # the same price, once the first is paid: another amount
    assert after.amount_base_units != first.amount_base_units
    sent(first.amount_base_units, "0xagain")  # the first payer pays again

    after.refresh_from_db()
    first.refresh_from_db()
    assert after.status == DraftStatus.PENDING and after.paid_tx_id is None
    assert first.status == DraftStatus.CONFIRMED and first.paid_tx_ids == ["0xfirst"]
    report = UnmatchedTransfer.objects.get(transfer__txid="0xagain")
    assert report.user == owner and str(first.id) in report.candidate_draft_ids and report.matched_at is None
    [again] = Event.objects.filter(type="draft.paid_again")
    assert again.draft_id == first.id and again.data["draftId"] == str(first.id)
    assert again.data["again"] == {
        "transferId": str(report.id),
        "txId": "0xagain",
        "outputIndex": 0,
        "amountSats": first.amount_base_units,
    }
    listed = api_client.get("/api/v1/transfers").json()["items"]
    assert [t["txId"] for t in listed] == ["0xagain"]
    # Subscribed to everything (no `events`), an endpoint gets it: it is not opt-in.
    from webhooks.models import OPT_IN_EVENT_TYPES

    assert "draft.paid_again" not in OPT_IN_EVENT_TYPES


def test_an_exact_amount_a_closed_draft_holds_is_refused_to_its_account_until_the_window_ends(
    api_client, owner, settings
):
    settings.AMOUNT_RESERVATION_DAYS = 7
    exact = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESS, "amountSats": 5_000_000}
    paid = created(api_client, exact)
    sent(5_000_000, "0xpaid")
    paid.refresh_from_db()
    assert paid.status == DraftStatus.CONFIRMED

    refused = api_client.post("/api/v1/drafts", exact, format="json")
    assert refused.status_code == 409, refused.json()
    assert refused.json()["code"] == "amount_collision" and refused.json()["heldDraftId"] == str(paid.id)
    assert Draft.objects.filter(user=owner).count() == 1

    with time_machine.travel(paid.amount_held_until + timedelta(seconds=1)):
        later = api_client.post("/api/v1/drafts", exact, format="json")
    assert later.status_code == 201, later.json()
    assert later.json()["amountSats"] == 5_000_000


def test_the_reservation_window_ends_and_a_fiat_draft_may_bill_the_amount_again(api_client, settings):
    settings.AMOUNT_RESERVATION_DAYS = 7
    cancelled = created(api_client, FIAT)
    assert api_client.post(f"/api/v1/drafts/{cancelled.id}/cancel").status_code == 200
    cancelled.refresh_from_db()
    assert (
        timezone.now() + timedelta(days=6, hours=23) < cancelled.amount_held_until <= timezone.now() + timedelta(days=7)
    )

    inside = created(api_client, FIAT)
    assert inside.amount_base_units == cancelled.amount_base_units + 1  # nudged past the held amount
    Draft.objects.filter(pk=inside.pk).delete()

    with time_machine.travel(cancelled.amount_held_until + timedelta(seconds=1)):
        outside = created(api_client, FIAT)
    assert outside.amount_base_units == cancelled.amount_base_units


def test_a_near_amount_is_reported_and_never_turns_another_draft_amount_mismatch(api_client, owner):
    first = created(api_client, FIAT)
    sent(first.amount_base_units, "0xfirst")
    after = created(api_client, FIAT)
    assert abs(after.amount_base_units - first.amount_base_units) < first.amount_base_units // 100

    near = first.amount_base_units * 97 // 100  # 3% short of both: the first payer's, or the second's?
    sent(near, "0xnear")

    after.refresh_from_db()
    assert after.status == DraftStatus.PENDING and after.amount_mismatch is None
    assert not Event.objects.filter(type="draft.amount_mismatch").exists()
    report = UnmatchedTransfer.objects.get(transfer__txid="0xnear")
    assert {str(first.id), str(after.id)} <= set(report.candidate_draft_ids)
    assert not Event.objects.filter(type="draft.paid_again").exists()  # not the exact amount of a paid draft

"""What the merchant sees of a payment that is off its amount: the lists say Underpaid, Overpaid,
Confirming and Reverted rather than Open, and accepting a received amount asks to confirm first
(a server-rendered step); afterwards the payer's page shows the amount actually received."""

from __future__ import annotations

import re

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from drafts.enums import DraftStatus
from drafts.models import Draft
from tests.conftest import stepped_up
from tests.drafts.conftest import FEE_ADDRESSES
from tests.factories import make_draft
from tests.paylinks.conftest import create_link, link_body, pay, select  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _operator():
    with override_settings(
        PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES,
        API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"},
        CHECKOUT_RATE_LIMITS={"read": "10000/min", "write": "10000/min"},
    ):
        yield


@pytest.fixture
def browser(owner) -> Client:
    return stepped_up(Client(enforce_csrf_checks=False), owner)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("\u00a0", " ")


def status_cells(html: str) -> list[str]:
    return re.findall(r'<span class="status status-[A-Za-z]+">([^<]+)</span>', html)


def test_the_drafts_list_names_underpaid_overpaid_confirming_and_reverted(browser, owner):
    short, over, seen = 25_000_001, 25_000_002, 25_000_003
    make_draft(owner, status=DraftStatus.AMOUNT_MISMATCH, amount_base_units=short, received_base_units=short - 9)
    make_draft(owner, status=DraftStatus.AMOUNT_MISMATCH, amount_base_units=over, received_base_units=over + 9)
    make_draft(owner, status=DraftStatus.SEEN, amount_base_units=seen, received_base_units=seen, paid_tx_id="0x3")
    make_draft(owner, amount_base_units=25_000_004, payment_reverted_at=timezone.now(), reverted_tx_ids=["0x4"])
    make_draft(owner, amount_base_units=25_000_005)

    html = browser.get("/dashboard/drafts/").content.decode()

    assert sorted(status_cells(html)) == ["Confirming", "Overpaid", "Pending", "Reverted", "Underpaid"]


def test_the_pay_links_list_says_underpaid_not_open(browser, create_link, select):  # noqa: F811
    short = create_link()
    draft_id = select(short["token"], currency="BTC", network="Mainnet").json()["draftId"]
    draft = Draft.objects.get(pk=draft_id)
    pay(draft_id, confirmations=0, received=draft.amount_base_units * 95 // 100, tx_id="aa" * 32)
    create_link()  # nothing chosen yet: Open

    html = browser.get("/dashboard/pay-links/").content.decode()

    assert sorted(status_cells(html)) == ["Open", "Underpaid"]


def test_accepting_a_received_amount_asks_to_confirm_and_the_payer_page_then_shows_it(
    browser,
    create_link,  # noqa: F811
    select,  # noqa: F811
):
    link = create_link()
    draft_id = select(link["token"], currency="BTC", network="Mainnet").json()["draftId"]
    draft = Draft.objects.get(pk=draft_id)
    received = draft.amount_base_units * 95 // 100
    pay(draft_id, confirmations=0, received=received, tx_id="aa" * 32)

    asked = browser.post(f"/dashboard/drafts/{draft_id}/accept")

    draft.refresh_from_db()
    assert asked.status_code == 200 and draft.status == DraftStatus.AMOUNT_MISMATCH  # nothing done yet
    text = text_of(asked.content.decode())
    assert "Accept the received amount?" in text and f"Received {received / 10**8:.8f} BTC" in text
    assert f"Billed {draft.amount_base_units / 10**8:.8f} BTC" in text and 'name="confirmed" value="yes"' in (
        asked.content.decode()
    )

    done = browser.post(f"/dashboard/drafts/{draft_id}/accept", {"confirmed": "yes"})

    draft.refresh_from_db()
    assert done.status_code == 302 and draft.status == DraftStatus.SEEN and draft.accepted_by_owner
    pay(draft_id, confirmations=draft.required_confirmations, received=received, tx_id="aa" * 32)
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CONFIRMED
    page = text_of(Client().get(f"/pay/{link['token']}").content.decode())
    assert "Payment confirmed" in page and f"{received / 10**8:.8f} BTC" in page
    assert "Accepted as payment in full" in page
    assert f"{draft.amount_base_units / 10**8:.8f} BTC" in page  # what was billed, named as such

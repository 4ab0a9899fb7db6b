"""The receiving-address lock: while on, what API keys and MCP create (drafts, pay links,
recurring templates) pays only Receiving addresses of the address book past their waiting
time; adding one needs step-up and waits RECEIVER_LOCK_DELAY_HOURS; turning the lock on needs a
session, turning it off step-up and the same wait. A person's session is not limited."""

from __future__ import annotations

import time
from datetime import timedelta
from unittest.mock import ANY

import pytest
import time_machine
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.authentication import api_key_authenticate
from accounts.models import User
from addressbook.models import AddressBookEntry
from core.problems import Problem
from mcp_server.tools import BY_NAME, Call
from notifications.models import EmailNotification
from tests.conftest import stepped_up
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES

pytestmark = pytest.mark.django_db

BOOKED = ADDRESSES["Base"]
STRANGER = "0x" + "1" * 40
DRAFT = {"network": "Base", "currency": "USDC", "amountSats": 5_000_000}
LOCK_URL = "/api/v1/account/receiver-lock"
BOOK_URL = "/api/v1/address-book"


@pytest.fixture(autouse=True)
def _fee_addresses():
    with override_settings(PLATFORM_FEE_ADDRESSES=FEE_ADDRESSES):
        yield


@pytest.fixture
def person(owner) -> APIClient:
    """The owner's browser session, with a second factor proved just now."""
    return stepped_up(APIClient(), owner)


@pytest.fixture
def locked(owner, person) -> User:
    response = person.put(LOCK_URL, {"enabled": True}, format="json")
    assert response.status_code == 200 and response.json()["enabled"] is True, response.content
    return owner


def book(person, address=BOOKED, **extra):
    body = {"label": "Till", "address": address, "network": "Base", "direction": "Receiving"} | extra
    return person.post(BOOK_URL, body, format="json")


def test_a_key_cannot_have_a_draft_pay_an_address_outside_the_book(api_client, locked):
    response = api_client.post("/api/v1/drafts", DRAFT | {"receiverAddress": STRANGER}, format="json")

    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "receiver_not_allowed" and body["errors"][0]["field"] == "receiverAddress"


def test_an_address_added_under_the_lock_works_for_keys_only_after_the_delay(api_client, locked, person):
    added = book(person)
    entry = AddressBookEntry.objects.get()
    within = api_client.post("/api/v1/drafts", DRAFT | {"receiverAddress": BOOKED}, format="json")
    with time_machine.travel(timezone.now() + timedelta(hours=24, minutes=1)):
        after = api_client.post("/api/v1/drafts", DRAFT | {"receiverAddress": BOOKED}, format="json")

    assert added.status_code == 200 and added.json()["usableFrom"] is not None
    assert timedelta(hours=23, minutes=59) < entry.usable_from - timezone.now() <= timedelta(hours=24)
    assert within.status_code == 403 and within.json()["code"] == "receiver_not_allowed"
    assert within.json()["usableFrom"].startswith(entry.usable_from.strftime("%Y-%m-%dT%H:%M"))
    assert after.status_code == 201, after.json()
    email = EmailNotification.objects.get(context__notice="address_added")
    assert email.context["address"] == entry.address and "lock_url" in email.context


def test_an_address_in_the_book_before_the_lock_is_usable_at_once_and_named_by_its_entry(api_client, owner, person):
    entry_id = book(person).json()["id"]
    person.put(LOCK_URL, {"enabled": True}, format="json")

    by_id = api_client.post("/api/v1/drafts", DRAFT | {"addressBookId": entry_id}, format="json")
    sending = book(person, address=STRANGER, direction="Sending")  # needs step-up: the person has it
    as_sending = api_client.post("/api/v1/drafts", DRAFT | {"receiverAddress": STRANGER}, format="json")

    assert by_id.status_code == 201, by_id.json()
    assert sending.status_code == 200
    assert as_sending.status_code == 403  # a Sending entry is not a receiver


def test_adding_to_a_locked_book_needs_step_up_so_never_a_key(api_client, locked, owner):
    late = APIClient()
    late.force_login(owner)  # signed in, but no recent second factor

    by_key = book(api_client)
    by_session = book(late)

    assert by_key.status_code == 403 and by_key.json()["code"] == "step_up_required"
    assert by_session.status_code == 403 and by_session.json()["code"] == "step_up_required"
    assert not AddressBookEntry.objects.exists()


def test_a_key_cannot_change_a_booked_receiver_under_the_lock(api_client, owner, person):
    entry_id = book(person).json()["id"]
    person.put(LOCK_URL, {"enabled": True}, format="json")
    body = {"label": "Renamed", "address": BOOKED, "network": "Base", "direction": "Receiving"}

    renamed = api_client.put(f"{BOOK_URL}/{entry_id}", body, format="json")
    moved = api_client.put(f"{BOOK_URL}/{entry_id}", body | {"address": STRANGER}, format="json")

    assert renamed.status_code == 200 and renamed.json()["usableFrom"] is None
    assert moved.status_code == 403 and moved.json()["code"] == "step_up_required"
    assert AddressBookEntry.objects.get().address == BOOKED


def test_turning_the_lock_on_needs_a_session_and_off_needs_step_up_and_the_delay(api_client, owner):
    by_key = api_client.put(LOCK_URL, {"enabled": True}, format="json")
    late = APIClient()
    late.force_login(owner)
    on = late.put(LOCK_URL, {"enabled": True}, format="json")
    off_refused = late.put(LOCK_URL, {"enabled": False}, format="json")
    stepped_up(late)
    off = late.put(LOCK_URL, {"enabled": False}, format="json")
    still = api_client.post("/api/v1/drafts", DRAFT | {"receiverAddress": STRANGER}, format="json")
    with time_machine.travel(timezone.now() + timedelta(hours=24, minutes=1)):
        later = late.get(LOCK_URL).json()
        free = api_client.post("/api/v1/drafts", DRAFT | {"receiverAddress": STRANGER}, format="json")

    assert by_key.status_code == 403 and by_key.json()["code"] == "session_required"
    assert on.status_code == 200 and on.json() == {"enabled": True, "offAt": None, "delayHours": 24}
    assert off_refused.status_code == 403 and off_refused.json()["code"] == "step_up_required"
    assert off.status_code == 200 and off.json()["enabled"] is True and off.json()["offAt"]
    assert still.status_code == 403
    assert later["enabled"] is False and free.status_code == 201
    email = EmailNotification.objects.get(context__notice="receiver_lock_off")
    assert email.context["off_at"] and "lock_url" in email.context


def test_a_session_is_not_limited_by_the_lock(locked, person):
    response = person.post("/api/v1/drafts", DRAFT | {"receiverAddress": STRANGER}, format="json")

    assert response.status_code == 201, response.json()


def test_pay_links_templates_and_invoices_from_keys_are_held_to_the_book(api_client, locked):
    link = {
        "fiatCurrency": "EUR",
        "fiatAmount": 25,
        "options": [{"currency": "USDC", "network": "Base", "receiverAddress": STRANGER}],
    }
    template = {"name": "Rent", "interval": "Monthly", "draft": DRAFT | {"receiverAddress": STRANGER}}
    invoice = {"network": "Mainnet", "currency": "BTC", "paymentMethod": "Lightning", "bolt11": "lnbc1invoice"}

    pay_link = api_client.post("/api/v1/payment-requests", link, format="json")
    recurring = api_client.post("/api/v1/recurring-templates", template, format="json")
    lightning = api_client.post("/api/v1/drafts", invoice, format="json")

    assert pay_link.status_code == 403 and pay_link.json()["errors"][0]["field"] == "options[0].receiverAddress"
    assert recurring.status_code == 403 and recurring.json()["errors"][0]["field"] == "draft.receiverAddress"
    assert lightning.status_code == 403 and lightning.json()["errors"][0]["field"] == "bolt11"


def test_an_mcp_tool_is_held_to_the_book_like_rest(make_key, locked):
    """The create_draft tool's body, for the account its key authenticates (as the MCP server's verifier does)."""
    api_key, _ = api_key_authenticate(token=make_key("drafts:write"), client_ident="agent")

    with pytest.raises(Problem) as refused:
        BY_NAME["create_draft"].run(
            Call(user=api_key.user, api_key=api_key, arguments=DRAFT | {"receiverAddress": STRANGER})
        )

    assert refused.value.code == "receiver_not_allowed" and refused.value.fields == {"receiverAddress": ANY}


def test_the_lock_off_adds_no_query_to_a_keyed_draft(api_client, owner):
    with CaptureQueriesContext(connection) as off:
        made = api_client.post("/api/v1/drafts", DRAFT | {"receiverAddress": STRANGER}, format="json")
        assert made.status_code == 201
    User.objects.filter(pk=owner.pk).update(receiver_lock=True)
    AddressBookEntry.objects.create(user=owner, network="Base", address=BOOKED, direction="Receiving")
    with CaptureQueriesContext(connection) as on:
        made = api_client.post("/api/v1/drafts", DRAFT | {"receiverAddress": BOOKED}, format="json")
        assert made.status_code == 201

    def book_reads(queries):
        return [q["sql"] for q in queries if "addressbook_addressbookentry" in q["sql"]]

    assert book_reads(off.captured_queries) == []
    assert len(book_reads(on.captured_queries)) == 1


def test_the_dashboard_switches_the_lock_and_cuts_an_address_short_after_confirming(owner):
    browser = Client()
    browser.force_login(owner)

    assert browser.post("/dashboard/address-book/lock", {"enabled": "on"}).status_code == 302
    owner.refresh_from_db()
    form = {"label": "Till", "network": "Base", "address": BOOKED, "direction": "Receiving"}
    asked = browser.post("/dashboard/address-book/", form)
    stepped_up(browser)
    saved = browser.post("/dashboard/address-book/", form)
    entry = AddressBookEntry.objects.get()
    waited = entry.usable_from
    page = browser.get("/dashboard/address-book/").content.decode()
    cut = browser.post(f"/dashboard/address-book/{entry.id}/usable-now")
    entry.refresh_from_db()

    assert owner.receiver_lock is True
    assert asked.status_code == 302 and asked["Location"].startswith("/dashboard/confirm?next=")
    assert saved.status_code == 302 and waited is not None
    assert "Usable now" in page and "Receiving-address lock" in page
    assert cut.status_code == 302 and entry.usable_from is None
    assert EmailNotification.objects.filter(context__notice="receiver_lock_address_now").count() == 1


def test_settings_name_the_delay(api_client, locked, person, settings):
    settings.RECEIVER_LOCK_DELAY_HOURS = 1
    book(person)
    with time_machine.travel(time.time() + 3601):
        response = api_client.post("/api/v1/drafts", DRAFT | {"receiverAddress": BOOKED}, format="json")

    assert response.status_code == 201, response.json()

"""The payer's receipt and the merchant's paid email read like a bill: fiat at its own
precision ("€19.90", not "19.9 EUR"), the network and method by name, the time in the
account's zone with the zone named (not "2026-11-25T20:27:39.227872Z"), and whom to contact."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from django.core import mail

from accounts.profiles import merchant_profile_update
from notifications.services import emails_send_due
from tests.paylinks.conftest import pay

pytestmark = pytest.mark.django_db

PAID_AT = datetime(2026, 11, 25, 20, 27, 39, 227872, tzinfo=UTC)


def test_the_receipt_reads_in_the_merchants_zone_with_display_names_and_support(
    owner, anon_client, create_link, select
):
    merchant_profile_update(
        user=owner,
        changes={
            "display_name": "Corner Coffee",
            "support_email": "help@corner.example",
            "support_url": "https://corner.example/help",
            "time_zone": "Europe/Berlin",
        },
    )
    link = create_link(fiatAmount=19.9, returnUrl="https://corner.example/order/1001")
    draft_id = select(link["token"]).json()["draftId"]
    anon_client.post(f"/api/v1/checkout/{link['token']}/receipt", {"email": "payer@example.net"}, format="json")

    with time_machine.travel(PAID_AT, tick=False):
        pay(draft_id, confirmations=12, tx_id="0xabc")
    emails_send_due()

    (receipt,) = [m for m in mail.outbox if m.to == ["payer@example.net"]]
    html = receipt.alternatives[0][0]
    assert receipt.subject == "Receipt: €19.90 paid to Corner Coffee"
    for text in (receipt.body, html):
        assert "€19.90" in text and "19.9 EUR" not in text
        assert "Nov 25, 2026, 9:27:39\u202fPM Europe/Berlin" in text and "2026-11-25T20:27" not in text
        assert "on Ethereum" in text and "One transfer" in text and "SingleOutput" not in text
        assert "help@corner.example" in text and "https://corner.example/help" in text
        assert "https://etherscan.io/tx/0xabc" in text
    assert "Back to Corner Coffee" in html and 'href="https://corner.example/order/1001"' in html

    (paid,) = [m for m in mail.outbox if m.to == [owner.email] and m.subject.startswith("Payment request paid")]
    assert "Requested:     €19.90" in paid.body
    assert "When:          Nov 25, 2026, 9:27:39\u202fPM Europe/Berlin" in paid.body


def test_an_account_without_a_zone_reads_utc_and_says_so(owner, anon_client, create_link, select):
    link = create_link(fiatCurrency="JPY", fiatAmount=2500)
    draft_id = select(link["token"]).json()["draftId"]
    anon_client.post(f"/api/v1/checkout/{link['token']}/receipt", {"email": "payer@example.net"}, format="json")
    with time_machine.travel(PAID_AT, tick=False):
        pay(draft_id, confirmations=12)
    emails_send_due()

    (receipt,) = [m for m in mail.outbox if m.to == ["payer@example.net"]]
    assert "Amount: ¥2,500" in receipt.body
    assert "When: Nov 25, 2026, 8:27:39\u202fPM UTC" in receipt.body

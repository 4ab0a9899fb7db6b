"""The second hostile pass over what came since the last review (docs/security.md): refunds,
test mode, the merchant profile and logo, the pay page's long poll. Each test is one attempt
that held; the attempts that did not hold were fixed with tests of their own."""

from __future__ import annotations

import io
from base64 import b64encode

import pytest
from PIL import Image
from rest_framework.test import APIClient

from refunds.models import Refund
from tests.paylinks.test_pay_page_live import asgi_get
from tests.refunds.conftest import CUSTOMER, _generous_limits, issue, paid_draft  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def refund(paid_draft, issue) -> dict:  # noqa: F811
    response = issue(paid_draft(), full=True, reason="Returned: wrong size")
    assert response.status_code == 201, response.json()
    return response.json()


def claim(token: str, address: str):
    return APIClient().post(f"/api/v1/refund-claims/{token}", {"refundAddress": address}, format="json")


def test_a_refund_reason_with_a_bidi_override_or_a_zero_width_space_is_refused(paid_draft, issue):  # noqa: F811
    draft = paid_draft()
    for reason in ("Refund for order \u202e1234", "Re\u200bturned"):
        response = issue(draft, full=True, reason=reason)
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == "reason"
    assert not Refund.objects.exists()


def test_a_second_payer_with_the_link_cannot_move_a_claimed_refund_to_another_address(refund):
    token = refund["claimUrl"].rsplit("/", 1)[1]
    assert claim(token, CUSTOMER["Ethereum"]).status_code == 200
    again = claim(token, CUSTOMER["Base"])
    assert again.status_code == 409
    assert Refund.objects.get().refund_address == CUSTOMER["Ethereum"]


def test_a_claim_address_hiding_an_invisible_character_is_refused(refund):
    token = refund["claimUrl"].rsplit("/", 1)[1]
    response = claim(token, CUSTOMER["Ethereum"][:10] + "\u200b" + CUSTOMER["Ethereum"][10:])
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "refundAddress"
    assert Refund.objects.get().status == "Claimable"


def test_another_accounts_key_cannot_approve_or_cancel_a_refund(refund, client_with_scopes, other_account):
    stranger = client_with_scopes("refunds:write", "refunds:read", user=other_account)
    for action in ("approve", "cancel"):
        assert stranger.post(f"/api/v1/refunds/{refund['id']}/{action}").status_code == 404
    assert Refund.objects.get().status == "Claimable"


def test_a_test_key_cannot_simulate_a_payment_of_a_live_draft_of_its_own_account(api_client, make_key):
    live = api_client.post(
        "/api/v1/drafts",
        {"network": "Ethereum", "currency": "USDC", "receiverAddress": CUSTOMER["Ethereum"], "amountSats": 1_000_000},
        format="json",
    ).json()
    test_key = APIClient()
    test_key.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(livemode=False)}")
    assert test_key.post(f"/api/v1/test-helpers/drafts/{live['id']}/pay").status_code == 404
    assert api_client.get(f"/api/v1/drafts/{live['id']}").json()["status"] == "Pending"


def test_a_logo_carrying_a_script_after_its_image_is_served_without_it(api_client, anon_client):
    out = io.BytesIO()
    Image.new("RGB", (30, 30), (0, 90, 200)).save(out, format="PNG")
    polyglot = out.getvalue() + b"<script>alert(document.domain)</script><html>"
    response = api_client.put(
        "/api/v1/account/profile/logo", {"imageBase64": b64encode(polyglot).decode()}, format="json"
    )
    assert response.status_code == 200
    served = anon_client.get(response.json()["logoUrl"])
    body = b"".join(served.streaming_content) if served.streaming else served.content
    assert b"<script>" not in body and body.startswith(b"\x89PNG")
    assert served["Content-Type"] == "image/png" and served["X-Content-Type-Options"] == "nosniff"


def test_an_svg_logo_under_a_png_name_is_refused(api_client):
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="9" height="9"/></svg>'
    response = api_client.put("/api/v1/account/profile/logo", {"imageBase64": b64encode(svg).decode()}, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["code"] == "invalid_image"


@pytest.mark.django_db(transaction=True)
def test_the_long_poll_takes_no_place_for_an_unknown_token_even_with_a_long_since():
    from paylinks import live

    try:
        assert asgi_get("/pay/" + "x" * 30 + "/live?since=" + "a" * 5000).status_code == 404
        assert live._waiters == 0 and live._account_waiters == {}
    finally:
        live.reads_close()

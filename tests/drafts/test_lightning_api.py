"""Lightning drafts from a BOLT11 invoice or a Lightning address (LNURL-pay)."""

import hashlib
import time

import pytest

from drafts.models import Draft
from tests.formats.conftest import sign_invoice

pytestmark = pytest.mark.django_db


def invoice(key, **kwargs) -> str:
    return sign_invoice(key, date=int(time.time()), **kwargs)


def test_a_bolt11_invoice_makes_a_lightning_draft_for_its_exact_amount(create, node_key):
    pr = invoice(node_key, amount_msat=150_000_000, payment_hash="ab" * 32)
    response = create({"network": "Mainnet", "bolt11": pr})
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["paymentMethod"] == "Lightning" and body["amountSats"] == 150_000
    assert body["bolt11"] == pr and body["paymentHash"] == "ab" * 32
    assert body["paymentUri"] == f"lightning:{pr}"
    assert body["feeAccrued"] is True and body["receiverAddress"] is None
    draft = Draft.objects.get(pk=body["id"])
    assert draft.expires_at <= draft.invoice_expires_at


def test_an_amount_that_agrees_with_the_invoice_is_accepted(create, node_key):
    pr = invoice(node_key, amount_msat=150_000_000)
    assert create({"network": "Mainnet", "bolt11": pr, "amountSats": 150_000}).status_code == 201


@pytest.mark.parametrize(
    ("kwargs", "request_extra", "code"),
    [
        ({"amount_msat": 150_000_000}, {"amountSats": 150_001}, "invoice_amount_mismatch"),
        ({"amount_msat": None}, {}, "invoice_amountless"),
        ({"amount_msat": 150_000_000, "currency": "tb"}, {}, "invoice_network_mismatch"),
        ({"amount_msat": 150_000_000, "expiry": 1, "date": int(time.time()) - 3600}, {}, "invoice_expired"),
        ({"amount_msat": 150_000_000}, {"fiatCurrency": "EUR", "fiatAmount": 5}, "ambiguous"),
    ],
)
def test_bad_invoices_are_400_naming_the_problem(create, node_key, kwargs, request_extra, code):
    pr = sign_invoice(node_key, **({"date": int(time.time())} | kwargs))
    response = create({"network": "Mainnet", "bolt11": pr, **request_extra})
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == code
    assert not Draft.objects.exists()


def test_a_tampered_invoice_is_refused(create, node_key):
    pr = invoice(node_key, amount_msat=150_000_000)
    broken = pr[:-10] + ("q" if pr[-10] != "q" else "p") + pr[-9:]
    response = create({"network": "Mainnet", "bolt11": broken})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "bolt11"


def test_lightning_is_only_for_bitcoin(create, node_key):
    pr = invoice(node_key, amount_msat=150_000_000)
    response = create({"network": "Base", "currency": "USDC", "bolt11": pr})
    assert response.status_code == 400 and response.json()["code"] == "unsupported_combination"


def test_a_lightning_address_is_asked_for_an_invoice_of_the_exact_amount(create, lnurl_server):
    response = create({"network": "Mainnet", "receiverAddress": lnurl_server.address, "amountSats": 21_000})
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["paymentMethod"] == "Lightning" and body["amountSats"] == 21_000
    assert body["lightningAddress"] == lnurl_server.address
    assert lnurl_server.callbacks == [21_000_000]
    draft = Draft.objects.get(pk=body["id"])
    assert draft.lnurl_verify_url == f"{lnurl_server.base}/lnurlp/alice/verify/{draft.payment_hash}"
    assert hashlib.sha256(bytes.fromhex(draft.payment_hash)).hexdigest()  # a real 32-byte hash


def test_a_lightning_address_draft_can_be_priced_in_fiat(create, lnurl_server):
    response = create(
        {"network": "Mainnet", "lightningAddress": lnurl_server.address, "fiatCurrency": "USD", "fiatAmount": 10}
    )
    assert response.status_code == 201, response.json()
    assert lnurl_server.callbacks == [response.json()["amountSats"] * 1000]


def test_a_lightning_address_server_that_lies_about_the_amount_is_refused(create, lnurl_server):
    lnurl_server.mode = "wrong_amount"
    response = create({"network": "Mainnet", "lightningAddress": lnurl_server.address, "amountSats": 21_000})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "lightningAddress"
    assert not Draft.objects.exists()


def test_an_invoice_already_attached_to_one_of_my_drafts_is_409_naming_that_draft(create, node_key):
    pr = invoice(node_key, amount_msat=150_000_000, payment_hash="cd" * 32)
    first = create({"network": "Mainnet", "bolt11": pr}).json()

    response = create({"network": "Mainnet", "bolt11": pr})

    assert response.status_code == 409, response.json()
    body = response.json()
    assert body["code"] == "invoice_already_attached" and body["draftId"] == first["id"]
    assert first["id"] in body["detail"]
    assert Draft.objects.filter(payment_hash="cd" * 32).count() == 1


def test_an_invoice_attached_to_another_accounts_draft_is_409_without_naming_it(
    create, client_with_scopes, other_account, node_key
):
    pr = invoice(node_key, amount_msat=150_000_000, payment_hash="ce" * 32)
    theirs = client_with_scopes(user=other_account).post(
        "/api/v1/drafts", {"network": "Mainnet", "bolt11": pr}, format="json"
    )
    assert theirs.status_code == 201

    response = create({"network": "Mainnet", "bolt11": pr})

    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "invoice_already_attached" and "draftId" not in body
    assert theirs.json()["id"] not in response.content.decode()
    assert Draft.objects.filter(payment_hash="ce" * 32).count() == 1


def test_an_invoice_whose_draft_was_cancelled_can_be_attached_again(create, api_client, node_key):
    pr = invoice(node_key, amount_msat=150_000_000, payment_hash="cf" * 32)
    first = create({"network": "Mainnet", "bolt11": pr}).json()
    assert api_client.post(f"/api/v1/drafts/{first['id']}/cancel").status_code == 200

    assert create({"network": "Mainnet", "bolt11": pr}).status_code == 201

"""Text people type refuses control characters on every surface: each REST body's text fields
(and so each MCP tool's), each query's, and each page form's, with a field error naming the
field and nothing written. Tab and newline pass only where text may span lines (a suggestion)."""

import json

import pytest
from django.test import Client

from accounts.models import MerchantProfile
from addressbook.models import AddressBookEntry
from core.problems import Problem
from core.text import MESSAGE
from mcp_server.tools import BY_NAME, Call
from paylinks.models import PaymentRequest
from recurring.models import RecurringTemplate
from suggestions.models import Suggestion
from tests.conftest import stepped_up
from tests.dashboard.test_pages import PAY_LINK
from tests.drafts.conftest import ADDRESSES
from tests.paylinks.conftest import link_body
from tests.recurring.conftest import template_body

pytestmark = pytest.mark.django_db

# C0 (NUL, ESC, a trailing unit separator a trim would drop), DEL, C1 (NEL, CSI), bidi, line separator
CONTROLS = [
    "a\u0000b",
    "\u001b[2Jx",
    "order-7\u001f",
    "a\u007fb",
    "a\u0085b",
    "a\u009b31mb",
    "abc\u202edcba",
    "a\u2028b",
]
# Invisible and text-direction characters: zero-width space, non-joiner and joiner, word
# joiner, BOM, the marks LRM, RLM and ALM, an isolate: two texts that read the same must be
# the same text.
INVISIBLES = [
    "a\u200bb",
    "Shop\u200c",
    "\u200dShop",
    "a\u2060b",
    "\ufeffShop",
    "a\u200eb",
    "a\u200fb",
    "a\u061cb",
    "a\u2067b",
]
CONTROLS += INVISIBLES

ENTRY = {"label": "Shop", "address": ADDRESSES["Ethereum"], "network": "Ethereum", "direction": "Receiving"}
SURFACES = [
    # (name, path, body with the text at {}, field, model nothing may be written to)
    ("pay link order id", "/api/v1/payment-requests", lambda t: link_body(orderId=t), "orderId", PaymentRequest),
    ("pay link memo", "/api/v1/payment-requests", lambda t: link_body(memo=t), "memo", PaymentRequest),
    ("address book label", "/api/v1/address-book", lambda t: ENTRY | {"label": t}, "label", AddressBookEntry),
    (
        "recurring template name",
        "/api/v1/recurring-templates",
        lambda t: template_body(name=t),
        "name",
        RecurringTemplate,
    ),
    ("suggestion text", "/api/v1/suggestions", lambda t: {"text": t}, "text", Suggestion),
]


def assert_refused(response, field: str) -> None:
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert {"field": field, "code": "control_characters", "message": MESSAGE} in (problem["errors"]), problem


@pytest.mark.parametrize("text", CONTROLS)
@pytest.mark.parametrize(("path", "body", "field", "model"), [s[1:] for s in SURFACES], ids=[s[0] for s in SURFACES])
def test_a_text_field_with_a_control_character_is_a_400_naming_it(api_client, path, body, field, model, text):
    response = api_client.generic("POST", path, json.dumps(body(text)), content_type="application/json")
    assert_refused(response, field)
    assert not model.objects.exists()


def test_the_same_texts_without_control_characters_are_taken(api_client):
    for _, path, body, _, model in SURFACES:
        response = api_client.post(path, body("Plain text, with ümlauts and emoji \U0001f600"), format="json")
        assert response.status_code in (200, 201), response.content[:300]
        assert model.objects.exists()


def test_a_suggestion_may_span_lines_but_holds_no_other_control(anon_client):
    assert anon_client.post("/api/v1/suggestions", {"text": "One\r\n\ttwo\nthree"}, format="json").status_code == 200
    assert_refused(anon_client.post("/api/v1/suggestions", {"text": "One\n\u0007two"}, format="json"), "text")


def test_a_query_parameter_with_a_control_character_is_a_400_naming_it(api_client):
    assert_refused(api_client.get("/api/v1/drafts", {"q": "memo\u001b[2J"}), "q")
    assert_refused(api_client.get("/api/v1/payment-requests", {"orderId": "A\u0000"}), "orderId")


def test_an_api_key_name_from_a_session_is_refused_too(owner):
    client = Client()
    client.force_login(owner)
    stepped_up(client)
    response = client.post(
        "/api/v1/api-keys", {"name": "bot\u0085", "scopes": ["drafts:read"]}, content_type="application/json"
    )
    assert_refused(response, "name")


@pytest.mark.parametrize("text", CONTROLS)
@pytest.mark.parametrize("field", ["orderId", "memo"])
def test_the_pay_link_form_shows_the_error_next_to_the_field_and_writes_nothing(owner, field, text):
    browser = Client()
    browser.force_login(owner)
    response = browser.post("/dashboard/pay-links/new", {**PAY_LINK, field: text})
    assert response.status_code == 200
    assert response.context["form"].errors[field] == [MESSAGE]
    assert not PaymentRequest.objects.exists()


def test_a_pay_link_stored_before_controls_were_refused_shows_them_replaced(api_client, anon_client):
    created = api_client.post("/api/v1/payment-requests", link_body(memo="Invoice", orderId="A-1"), format="json")
    # A row written before this check existed: the payer's page never shows its controls raw.
    PaymentRequest.objects.filter(pk=created.json()["id"]).update(memo="Pay \u001b[2Jnow\u202e", order_id="A\u0007-1")
    token = created.json()["token"]
    page = anon_client.get(f"/pay/{token}").content.decode()
    assert "Pay \ufffd[2Jnow\ufffd" in page and "Order A\ufffd-1" in page
    assert not any(c in page for c in "\u001b\u0007\u202e")
    checkout = anon_client.get(f"/api/v1/checkout/{token}").json()
    assert (checkout["memo"], checkout["orderId"]) == ("Pay \ufffd[2Jnow\ufffd", "A\ufffd-1")


@pytest.mark.parametrize("text", INVISIBLES)
def test_an_mcp_tool_refuses_invisible_characters_naming_the_field(owner, text):
    with pytest.raises(Problem) as refused:  # the MCP server answers it as a tool error (its document)
        BY_NAME["create_payment_request"].run(
            Call(user=owner, api_key=None, arguments=link_body(memo=f"Two coffees {text}"))
        )
    document = refused.value.document()
    assert document["status"] == 400
    assert {"field": "memo", "code": "control_characters", "message": MESSAGE} in document["errors"]
    assert not PaymentRequest.objects.exists()


@pytest.mark.parametrize("text", INVISIBLES)
def test_the_profile_form_refuses_an_invisible_character_in_the_name_payers_see(owner, text):
    browser = Client()
    browser.force_login(owner)
    response = browser.post(
        "/dashboard/profile/",
        {"display_name": f"Corner {text}Coffee", "display_currency": "EUR", "time_zone": "UTC", "language": "en"},
    )
    assert response.status_code == 400
    assert response.context["form"].errors["display_name"] == [MESSAGE]
    assert not MerchantProfile.objects.exists()


def test_text_with_emoji_accents_and_right_to_left_letters_is_still_taken(api_client):
    response = api_client.post(
        "/api/v1/payment-requests",
        link_body(memo="Café \u0645\u0642\u0647\u0649 \U0001f600 \u0915\u093e\u092b\u0940"),
        format="json",
    )
    assert response.status_code == 201, response.content[:300]

"""llms.txt alone takes an agent from nothing to `draft.confirmed` at its webhook: the assets and
their base units (as payments.registry has them), the request fields, Idempotency-Key, the webhook
events, headers and signature scheme, and a verification snippet that verifies a real delivery."""

from __future__ import annotations

import json
import re
import time

import pytest
from django.test import override_settings

from mcp_server.tools import BY_NAME
from payments.registry import all_assets
from webhooks.models import EventType
from webhooks.signing import body_encode, delivery_headers, secret_generate

pytestmark = pytest.mark.django_db


def llms_text(client) -> str:
    response = client.get("/llms.txt")
    assert response.status_code == 200
    return response.content.decode()


def test_every_currency_and_network_is_listed_with_its_decimals_from_the_registry(anon_client):
    with override_settings(ENABLED_NETWORKS=["Base", "Mainnet"]):
        text = llms_text(anon_client)
    rows = {
        (cells[0], cells[1]): cells
        for cells in (
            [cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("| ")
        )
    }
    assets = all_assets()
    assert len(assets) > 10
    for asset in assets:
        cells = rows[(str(asset.currency), str(asset.network))]
        assert cells[2] == str(asset.decimals)
        assert cells[3] == ", ".join(str(method) for method in asset.methods)
        assert cells[4] == (asset.token_address or "-")
        assert cells[6] == ("yes" if str(asset.network) in ("Base", "Mainnet") else "no")
    listed = {key for key in rows if key != ("currency", "network") and not key[0].startswith("---")}
    assert listed == {(str(a.currency), str(a.network)) for a in assets}


def test_the_request_fields_and_idempotency_key_are_explained(anon_client):
    text = llms_text(anon_client)
    schema = BY_NAME["create_draft"].as_mcp().input_schema
    for name in schema["properties"]:
        if name != "idempotencyKey":
            assert re.search(rf"^- `{name}` \(", text, re.MULTILINE), name
    assert re.search(r"^- `network` \(string, required; one of .*Base", text, re.MULTILINE)
    assert "Idempotency-Key: " in text and "POST /api/v1/drafts" in text and "/tx-template" in text


def test_every_event_and_delivery_header_is_named(anon_client):
    text = llms_text(anon_client)
    for event in EventType:
        assert f"- `{event.value}`" in text
    secret = secret_generate()
    headers = delivery_headers(secret=secret, delivery_id="d", event_type="test", timestamp=1, body=b"{}")
    for name in headers:
        assert f"- `{name}`" in text
    assert "X-Service-Signature-Previous" in text  # sent during a secret rotation
    assert "HMAC-SHA256" in text and "whsec_" in text


def test_the_verification_snippet_accepts_a_real_delivery_and_refuses_a_forged_one(anon_client):
    text = llms_text(anon_client)
    snippet = re.search(r"```python\n(.*?)\n```", text, re.DOTALL).group(1)
    namespace: dict = {}
    exec(compile(snippet, "llms.txt", "exec"), namespace)  # noqa: S102 - our own published snippet
    verify = namespace["verify"]

    secret = secret_generate()
    body = body_encode("draft.confirmed", {"id": "x", "status": "Confirmed"})
    now = int(time.time())
    headers = delivery_headers(
        secret=secret, delivery_id="dlv-1", event_type="draft.confirmed", timestamp=now, body=body
    )
    lower = {name.lower(): value for name, value in headers.items()}
    assert verify(secret, lower, body) is True
    assert verify(secret, lower, body.replace(b"Confirmed", b"Cancelled")) is False
    assert verify(secret_generate(), lower, body) is False
    assert verify(secret, lower | {"webhook-timestamp": str(now - 3600)}, body) is False
    rotated = delivery_headers(
        secret=secret_generate(),
        delivery_id="dlv-1",
        event_type="draft.confirmed",
        timestamp=now,
        body=body,
        previous_secret=secret,
    )
    assert verify(secret, {name.lower(): value for name, value in rotated.items()}, body) is True
    assert json.loads(body)["event"] == "draft.confirmed"


def test_the_steps_to_a_confirmed_draft_name_each_operation_and_tool_in_order(anon_client):
    text = llms_text(anon_client)
    steps = text.split("## From nothing to draft.confirmed at your webhook", 1)[1].split("\n## ", 1)[0]
    order = ["create_webhook", "test_webhook", "create_draft", "get_tx_template", "A test payment", "draft.confirmed"]
    positions = [steps.index(name) for name in order]
    assert positions == sorted(positions)
    for tool in ("create_webhook", "test_webhook", "create_draft", "get_tx_template", "get_draft_status"):
        assert tool in BY_NAME
    assert "## Test mode" in text  # the test-mode section, filled where test mode exists
    assert "manage.py devpay" in text and "manage.py devchain" in text


def test_the_body_rules_and_pay_link_fields_are_stated(anon_client):
    text = llms_text(anon_client)
    assert "body_not_allowed" in text and "upper case" in text
    pay_links = text.split("## Pay links: POST /api/v1/payment-requests", 1)[1].split("\n## ", 1)[0]
    for field in BY_NAME["create_payment_request"].as_mcp().input_schema["properties"]:
        if field != "idempotencyKey":
            assert f"- `{field}`" in pay_links

"""The MCP server at /mcp, driven with the SDK's own Streamable HTTP client against a real
server process: the same keys, scopes, limits, errors and bodies as the REST API."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from django.test import override_settings
from django.utils import timezone
from mcp.shared.exceptions import MCPError
from rest_framework.test import APIClient

from accounts.models import ApiKey
from mcp_server import schemas
from mcp_server.tools import BY_NAME, TOOLS
from tests.drafts.conftest import ADDRESSES
from tests.mcp.conftest import INITIALIZE, call_tool, in_session, raw_post

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BASE_USDC = {
    "network": "Base",
    "currency": "USDC",
    "receiverAddress": ADDRESSES["Base"],
    "fiatCurrency": "EUR",
    "fiatAmount": 25,
}


def listed(url: str, key: str) -> dict:
    async def work(session):
        return await session.list_tools()

    return {tool.name: tool for tool in in_session(url, key, work).tools}


def test_tools_list_shows_only_the_tools_the_keys_scopes_and_mode_allow(mcp_url, make_key):
    assert set(listed(mcp_url, make_key("drafts:read"))) == {
        "get_draft",
        "list_drafts",
        "get_draft_status",
        "get_tx_template",
        "get_draft_fees",
        "list_unmatched_transfers",
        "get_attention",
    }
    live = set(listed(mcp_url, make_key()))
    assert live == {tool.name for tool in TOOLS if not tool.test_only}
    assert {"test_pay_draft", "test_expire_draft", "test_reorg_draft"}.isdisjoint(live)  # live keys cannot call them
    assert set(listed(mcp_url, make_key(livemode=False))) == {tool.name for tool in TOOLS}
    webhooks_only = set(listed(mcp_url, make_key("webhooks:manage", livemode=False)))
    assert webhooks_only == {tool.name for tool in TOOLS if tool.scope == "webhooks:manage"}


def test_an_agent_initializes_and_lists_the_tools_with_the_rest_schemas(mcp_url, make_key):
    tools = listed(mcp_url, make_key())
    create = tools["create_draft"]
    body = schemas.openapi_document()["components"]["schemas"]["CreateDraftRequest"]
    for name, schema in body["properties"].items():  # the REST serializer's fields, as OpenAPI describes them
        mine = create.input_schema["properties"][name]
        if "$ref" not in json.dumps(schema):  # enums are inlined (tests/mcp/test_tool_schemas.py)
            rest_types = schema.get("type")
            rest_types = [t for t in rest_types if t != "null"] if isinstance(rest_types, list) else [rest_types]
            assert [mine.get("type")] == rest_types, name  # an optional argument is omitted, never null
            for keyword in ("minimum", "exclusiveMaximum"):
                assert mine.get(keyword) == schema.get(keyword), (name, keyword)
            assert mine.get("format") not in ("double", "float"), name  # money is an exact decimal
    assert "idempotencyKey" in create.input_schema["properties"]
    assert create.input_schema["additionalProperties"] is False
    assert tools["get_draft"].output_schema["properties"]["paymentUri"]
    assert create.output_schema["required"] == ["id", "status"]  # and get_draft's schema names every field
    assert all(tool.output_schema for tool in tools.values())

    assert tools["get_draft"].input_schema["required"] == ["id"]
    assert tools["get_draft"].annotations.read_only_hint is True
    assert tools["cancel_draft"].annotations.read_only_hint is not True
    assert tools["cancel_draft"].annotations.destructive_hint is not False  # the MCP default: destructive
    assert tools["create_draft"].annotations.idempotent_hint is not True


def test_every_argument_is_camel_case_like_the_rest_fields(mcp_url, make_key):
    import re

    names = {
        name for tool in listed(mcp_url, make_key(livemode=False)).values() for name in tool.input_schema["properties"]
    }
    assert [name for name in sorted(names) if not re.fullmatch(r"[a-z][a-zA-Z0-9]*", name)] == []


def test_each_result_carries_its_request_id_and_rate_limit_in_meta(mcp_url, make_key):
    key = make_key()
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_drafts", "arguments": {}}}
    status, headers, body = raw_post(mcp_url, call, {"Authorization": f"Bearer {key}", "X-Request-Id": "req-42"})
    assert status == 200 and headers["x-request-id"] == "req-42"
    meta = json.loads(body)["result"]["_meta"]
    assert meta["requestId"] == "req-42"
    assert meta["rateLimit"]["policy"] == "read" and meta["rateLimit"]["limit"] == 600
    assert 0 <= meta["rateLimit"]["remaining"] < 600 and meta["rateLimit"]["resetSeconds"] >= 0
    refused = call | {"params": {"name": "create_draft", "arguments": {"network": "Nowhere"}}}
    _, headers, body = raw_post(mcp_url, refused, {"Authorization": f"Bearer {key}"})
    result = json.loads(body)["result"]
    assert result["isError"] is True and result["_meta"]["requestId"] == headers["x-request-id"]
    assert result["_meta"]["rateLimit"]["policy"] == "write"


def test_a_draft_created_over_mcp_is_read_back_with_every_draft_tool(mcp_url, make_key):
    key = make_key("drafts:read", "drafts:write")
    created = call_tool(mcp_url, key, "create_draft", BASE_USDC)
    assert not created.is_error, created.structured_content
    draft = created.structured_content
    assert draft["status"] == "Pending" and draft["paymentUri"].startswith("ethereum:")

    for name in ("get_draft", "get_draft_status", "get_draft_fees"):
        result = call_tool(mcp_url, key, name, {"id": draft["id"]})
        assert not result.is_error, (name, result.structured_content)
    assert call_tool(mcp_url, key, "get_draft", {"id": draft["id"]}).structured_content["id"] == draft["id"]
    listed = call_tool(mcp_url, key, "list_drafts", {"pageSize": 5}).structured_content
    assert [d["id"] for d in listed["items"]] == [draft["id"]] and listed["total"] == 1

    template = call_tool(mcp_url, key, "get_tx_template", {"id": draft["id"]})
    assert template.is_error and template.structured_content["code"] == "tx_template_not_applicable"
    assert call_tool(mcp_url, key, "requote_draft", {"id": draft["id"]}).structured_content["code"] == (
        "requote_not_allowed"  # its quote has not expired
    )
    assert call_tool(mcp_url, key, "accept_received", {"id": draft["id"]}).structured_content["code"] == (
        "accept_not_allowed"  # nothing was received
    )
    cancelled = call_tool(mcp_url, key, "cancel_draft", {"id": draft["id"]})
    assert not cancelled.is_error and cancelled.structured_content["status"] == "Cancelled"


def test_a_bitcoin_draft_gives_its_transaction_template(mcp_url, make_key):
    key = make_key("drafts:read", "drafts:write")
    draft = call_tool(
        mcp_url,
        key,
        "create_draft",
        {"network": "Testnet", "currency": "BTC", "receiverAddress": ADDRESSES["Testnet"], "amountSats": 150_000},
    ).structured_content
    template = call_tool(mcp_url, key, "get_tx_template", {"id": draft["id"]})
    assert not template.is_error, template.structured_content
    outputs = template.structured_content["outputs"]
    assert outputs[0] == {
        "address": ADDRESSES["Testnet"],
        "amountSats": 150_000,
        "amountBtc": "0.00150000",
        "purpose": "Receiver",
    }
    assert template.structured_content["bitcoinCli"].startswith("bitcoin-cli")


def test_rates_fees_and_webhook_tools_answer(mcp_url, make_key):
    key = make_key("rates:read", "fees:read", "fees:write", "webhooks:manage")
    rates = call_tool(mcp_url, key, "get_rates", {"ccy": "EUR", "asset": "USDC"}).structured_content
    assert rates["ccy"] == "EUR" and rates["rates"][0]["asset"] == "USDC"
    schedule = call_tool(mcp_url, key, "get_fee_schedule").structured_content
    assert schedule["tiers"][0] == {"upToUsd": 10, "percent": 0.49}
    accrued = call_tool(mcp_url, key, "get_accrued_fees").structured_content
    assert accrued["draftCount"] == 0 and accrued["blocked"] is False
    settle = call_tool(mcp_url, key, "settle_accrued_fees", {"currency": "USDC", "network": "Base"})
    assert settle.is_error and settle.structured_content["status"] in (400, 409)
    webhooks = call_tool(mcp_url, key, "list_webhooks").structured_content
    assert webhooks == {"items": [], "total": 0, "next": None}


def test_a_tool_the_key_has_no_scope_for_is_a_tool_error_naming_the_scope(mcp_url, make_key):
    result = call_tool(mcp_url, make_key("drafts:read"), "create_draft", BASE_USDC)
    assert result.is_error
    assert result.structured_content["code"] == "missing_scope"
    assert result.structured_content["requiredScope"] == "drafts:write"
    assert "drafts:write" in result.content[0].text


def test_bad_input_is_a_tool_error_naming_the_field(mcp_url, make_key):
    result = call_tool(mcp_url, make_key(), "create_draft", BASE_USDC | {"receiverAddress": "0x1234"})
    assert result.is_error
    problem = result.structured_content
    assert problem["status"] == 400 and problem["code"] == "invalid_address"
    assert [error["field"] for error in problem["errors"]] == ["receiverAddress"]
    unknown = call_tool(mcp_url, make_key(), "create_draft", BASE_USDC | {"colour": "red"}).structured_content
    assert unknown["errors"][0]["field"] == "colour"


def test_another_accounts_draft_is_not_found(mcp_url, make_key, other_account):
    theirs = call_tool(mcp_url, make_key(user=other_account), "create_draft", BASE_USDC).structured_content
    result = call_tool(mcp_url, make_key(), "get_draft", {"id": theirs["id"]})
    assert result.is_error and result.structured_content["status"] == 404
    assert call_tool(mcp_url, make_key(), "get_draft", {"id": "not-a-uuid"}).structured_content["status"] == 404
    missing = call_tool(mcp_url, make_key(), "get_draft", {}).structured_content
    assert missing["status"] == 400 and missing["errors"][0]["field"] == "id"


def test_create_draft_is_idempotent_with_a_key(mcp_url, make_key):
    key = make_key()
    first = call_tool(mcp_url, key, "create_draft", BASE_USDC | {"idempotencyKey": "order-42"})
    again = call_tool(mcp_url, key, "create_draft", BASE_USDC | {"idempotencyKey": "order-42"})
    assert not again.is_error and again.structured_content == first.structured_content
    other = call_tool(mcp_url, key, "create_draft", BASE_USDC | {"fiatAmount": 26, "idempotencyKey": "order-42"})
    assert other.is_error and other.structured_content["code"] == "idempotency_key_reused"


def test_a_missing_or_unknown_key_is_a_401_with_a_challenge(mcp_url):
    status, headers, body = raw_post(mcp_url, INITIALIZE)
    assert status == 401 and headers["www-authenticate"].startswith("Bearer")
    assert json.loads(body)["code"] == "not_authenticated"

    status, headers, body = raw_post(mcp_url, INITIALIZE, {"Authorization": "Bearer pdk_" + "x" * 40})
    assert status == 401 and headers["www-authenticate"].startswith("Bearer")
    assert headers["content-type"] == "application/problem+json"
    assert json.loads(body) | {"type": None} == {
        "type": None,
        "title": "Authentication required",
        "status": 401,
        "detail": "The API key is not valid.",
        "code": "invalid_credentials",
        "errors": [],
    }


def test_a_revoked_or_expired_key_is_refused_at_once(mcp_url, make_key):
    key = make_key("drafts:read")
    assert not call_tool(mcp_url, key, "list_drafts").is_error
    ApiKey.objects.filter(prefix=key[:12]).update(revoked_at=timezone.now())
    status, _, body = raw_post(mcp_url, INITIALIZE, {"Authorization": f"Bearer {key}"})
    assert status == 401 and json.loads(body)["detail"] == "The API key has been revoked."

    expired = make_key("drafts:read", expires_at=timezone.now() + timezone.timedelta(seconds=1))
    ApiKey.objects.filter(prefix=expired[:12]).update(expires_at=timezone.now() - timezone.timedelta(seconds=1))
    status, _, body = raw_post(mcp_url, INITIALIZE, {"Authorization": f"Bearer {expired}"})
    assert status == 401 and json.loads(body)["detail"] == "The API key has expired."


def test_using_a_key_over_mcp_records_its_last_use(mcp_url, make_key):
    key = make_key("fees:read")
    call_tool(mcp_url, key, "get_fee_schedule")
    assert ApiKey.objects.get(prefix=key[:12]).last_used_at is not None


def test_guessing_keys_is_limited_per_address(mcp_server_with):
    url = mcp_server_with(API_AUTH_FAILURES_PER_MINUTE="2")
    guess = {"Authorization": "Bearer pdk_" + "y" * 40}
    assert [raw_post(url, INITIALIZE, guess)[0] for _ in range(3)] == [401, 401, 429]
    status, headers, body = raw_post(url, INITIALIZE, guess)
    assert status == 429 and headers["retry-after"] == "60" and json.loads(body)["code"] == "rate_limited"


def _start_well_inside_a_minute(margin: float = 15.0) -> None:
    """Rate limits count in whole-minute windows, and the server here is another process
    (its clock cannot be frozen): wait for the next minute when this one is nearly over."""
    left = 60 - time.time() % 60
    if left < margin:
        time.sleep(left + 0.1)


def test_rest_and_mcp_share_one_rate_limit_per_key(mcp_server_with, make_key):
    url = mcp_server_with(API_RATE_LIMIT_WRITES="2/min")
    key = make_key()
    _start_well_inside_a_minute()
    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    with override_settings(API_RATE_LIMITS={"read": "600/min", "write": "2/min"}):
        assert rest.post("/api/v1/drafts", BASE_USDC, format="json").status_code == 201
        assert not call_tool(url, key, "create_draft", BASE_USDC | {"fiatAmount": 30}).is_error
        assert rest.post("/api/v1/drafts", BASE_USDC, format="json").status_code == 429
        limited = call_tool(url, key, "create_draft", BASE_USDC | {"fiatAmount": 31})
        assert limited.is_error and limited.structured_content["code"] == "rate_limited"
        assert not call_tool(url, key, "list_drafts").is_error  # reads have their own budget


def test_a_costly_tool_spends_the_same_class_budgets_as_its_rest_operation(mcp_server_with, make_key):
    url = mcp_server_with(API_RATE_LIMIT_BATCH_PER_KEY="2/min", API_RATE_LIMIT_TX_TEMPLATE_PER_ACCOUNT="1/min")
    key = make_key()
    assert BY_NAME["create_drafts_batch"].cost == "batch" and BY_NAME["get_tx_template"].cost == "tx-template"
    _start_well_inside_a_minute()
    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    small = {"batch": {"key": "2/min", "account": "20/min"}, "tx-template": {"key": "60/min", "account": "1/min"}}
    with override_settings(API_COST_RATE_LIMITS=small):
        batch = {"items": [{"draft": BASE_USDC}]}
        assert rest.post("/api/v1/drafts/batch", batch, format="json").status_code == 200
        assert not call_tool(url, key, "create_drafts_batch", batch).is_error
        limited = call_tool(url, key, "create_drafts_batch", batch)
        assert limited.is_error and limited.structured_content["code"] == "rate_limited"
        assert limited.structured_content["limit"] == "batch" and limited.structured_content["per"] == "key"
        assert rest.post("/api/v1/drafts/batch", batch, format="json").status_code == 429
        assert not call_tool(url, key, "create_draft", BASE_USDC | {"fiatAmount": 26}).is_error  # not a batch
        # The account's budget: another key of the same account is refused too.
        draft = call_tool(url, key, "create_draft", BASE_USDC | {"fiatAmount": 27}).structured_content
        assert call_tool(url, key, "get_tx_template", {"id": draft["id"]}).structured_content["code"] == (
            "tx_template_not_applicable"
        )
        other = make_key()
        refused = call_tool(url, other, "get_tx_template", {"id": draft["id"]}).structured_content
        assert refused["code"] == "rate_limited" and refused["limit"] == "tx-template" and refused["per"] == "account"


def test_resources_give_the_asset_matrix_the_fee_schedule_and_drafts(mcp_url, make_key):
    key = make_key("drafts:read", "drafts:write", "fees:read")
    draft = call_tool(mcp_url, key, "create_draft", BASE_USDC).structured_content

    async def work(session):
        listed = await session.list_resources()
        templates = await session.list_resource_templates()
        matrix = await session.read_resource("payments://assets")
        schedule = await session.read_resource("fees://schedule")
        read = await session.read_resource(f"draft://{draft['id']}")
        return listed, templates, matrix, schedule, read

    listed, templates, matrix, schedule, read = in_session(mcp_url, key, work)
    assert {str(r.uri) for r in listed.resources} == {"payments://assets", "fees://schedule"}
    assert [t.uri_template for t in templates.resource_templates] == ["draft://{id}"]
    assets = json.loads(matrix.contents[0].text)["assets"]
    assert {"currency": "USDC", "network": "Base"}.items() <= next(
        a for a in assets if a["currency"] == "USDC" and a["network"] == "Base"
    ).items()
    assert not any(a["currency"] == "USDT" and a["network"] == "Base" for a in assets)
    assert json.loads(schedule.contents[0].text)["minFeeUsd"] == 0.01
    same = call_tool(mcp_url, key, "get_draft", {"id": draft["id"]}).structured_content
    assert json.loads(read.contents[0].text) == same


def test_a_host_not_in_allowed_hosts_is_refused(mcp_url, make_key):
    status, _, _ = raw_post(mcp_url, INITIALIZE, {"Authorization": f"Bearer {make_key()}", "Host": "evil.example"})
    assert status == 421
    status, _, _ = raw_post(
        mcp_url, INITIALIZE, {"Authorization": f"Bearer {make_key()}", "Origin": "https://evil.example"}
    )
    assert status == 403


def test_a_batch_creates_each_item_on_its_own(mcp_url, make_key):
    key = make_key("drafts:read", "drafts:write")
    items = [
        {"draft": BASE_USDC, "idempotencyKey": "batch-1"},
        {"draft": BASE_USDC | {"receiverAddress": "nope"}},
    ]
    result = call_tool(mcp_url, key, "create_drafts_batch", {"items": items})
    assert not result.is_error, result.structured_content
    first, second = result.structured_content["result"]
    assert first["index"] == 0 and first["draft"]["status"] == "Pending" and first["error"] is None
    assert second["index"] == 1 and "draft" not in second and "receiverAddress" in second["error"]


def test_the_mcp_process_answers_its_liveness_check_and_nothing_but_mcp(mcp_url):
    base = mcp_url.removesuffix("/mcp")
    with urllib.request.urlopen(f"{base}/healthz", timeout=10) as response:
        assert response.status == 200 and json.loads(response.read()) == {"status": "ok"}
    status, headers, body = raw_post(f"{base}/api/v1/drafts", {})
    assert status == 404 and headers["content-type"] == "application/problem+json"


def test_pay_link_tools_create_read_list_and_cancel_a_payment_request(mcp_url, make_key):
    key = make_key("paylinks:read", "paylinks:write")
    body = {
        "fiatCurrency": "EUR",
        "fiatAmount": 12.5,
        "options": [{"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]}],
        "orderId": "A-100",
    }
    created = call_tool(mcp_url, key, "create_payment_request", body | {"idempotencyKey": "link-7"})
    assert not created.is_error, created.structured_content
    link = created.structured_content
    assert link["status"] == "Open" and link["orderId"] == "A-100" and link["payUrl"]
    again = call_tool(mcp_url, key, "create_payment_request", body | {"idempotencyKey": "link-7"})
    assert again.structured_content == link

    assert call_tool(mcp_url, key, "get_payment_request", {"id": link["id"]}).structured_content == link
    listed = call_tool(mcp_url, key, "list_payment_requests").structured_content
    assert [item["id"] for item in listed["items"]] == [link["id"]]
    assert listed["total"] == 1 and listed["next"] is None  # the total REST sends in X-Total-Count
    cancelled = call_tool(mcp_url, key, "cancel_payment_request", {"id": link["id"]}).structured_content
    assert cancelled["status"] == "Cancelled"

    refused = call_tool(mcp_url, make_key("paylinks:read"), "create_payment_request", body)
    assert refused.is_error and refused.structured_content["requiredScope"] == "paylinks:write"


def test_a_deeply_nested_body_is_refused_and_the_process_lives_on(mcp_url, make_key):
    key = make_key()
    depth = 100_000  # about 200 KB, under the body limit
    arguments = '{"memo": ' + "[" * depth + "]" * depth + "}"
    body = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create_draft", "arguments": '
    request = urllib.request.Request(  # noqa: S310 - loopback only
        mcp_url,
        data=(body + arguments + "}}").encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {key}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback only
            answer = json.loads(response.read())
            assert "error" in answer or answer["result"]["isError"]
    except urllib.error.HTTPError as refused:
        assert 400 <= refused.code < 500
    assert not call_tool(mcp_url, key, "get_fee_schedule").is_error  # still serving


def test_a_resource_needs_the_scope_of_its_tool_and_only_shows_the_accounts_own_drafts(
    mcp_url, make_key, other_account
):
    theirs = call_tool(mcp_url, make_key(user=other_account), "create_draft", BASE_USDC).structured_content

    async def read(session, uri):
        try:
            await session.read_resource(uri)
        except MCPError as error:
            return error.error.data
        return None

    refused = in_session(mcp_url, make_key("drafts:read"), lambda s: read(s, "fees://schedule"))
    assert refused["code"] == "missing_scope" and refused["requiredScope"] == "fees:read"
    unknown = in_session(mcp_url, make_key("drafts:read"), lambda s: read(s, f"draft://{theirs['id']}"))
    assert unknown["status"] == 404


def test_the_server_keeps_no_session_an_account_could_pile_up(mcp_url, make_key):
    """Stateless Streamable HTTP: an initialize opens nothing that stays in the process, so no
    account can fill a pool of sessions; each call spends its key's budgets like a REST call."""
    auth = {"Authorization": f"Bearer {make_key()}"}
    for _ in range(3):
        status, headers, _ = raw_post(mcp_url, INITIALIZE, auth)
        assert status == 200 and "mcp-session-id" not in {name.lower() for name in headers}
    listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    status, _, body = raw_post(mcp_url, listed, auth)  # no session id: served all the same
    assert status == 200 and b"create_draft" in body

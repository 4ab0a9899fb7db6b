"""The webhook, recurring-template and address-book tools, called through the official MCP SDK
client as an agent would: each answers what its REST operation answers and changes what REST sees."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from standardwebhooks import Webhook as StandardWebhook

from addressbook.models import AddressBookEntry
from recurring.models import RecurringTemplate
from tests.drafts.conftest import ADDRESSES
from tests.mcp.conftest import in_session
from tests.webhooks.conftest import deliver_due, make_receiver  # noqa: F401
from webhooks.models import Webhook

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

AMOUNTS = (19.99, 20, 10.0)


def session_calls(url: str, key: str, calls: list[tuple[str, dict]]) -> list:
    async def work(session):
        await session.list_tools()  # the client then checks each structured result against its output schema
        return [await session.call_tool(name, arguments) for name, arguments in calls]

    return in_session(url, key, work)


def test_an_agent_registers_tests_lists_and_deletes_a_webhook(
    mcp_server_with,
    make_key,
    make_receiver,  # noqa: F811 - the fixture imported above
    settings,
):
    settings.OUTBOUND_ALLOW_LOOPBACK = True  # this process delivers; the server checks the URL
    url = mcp_server_with(OUTBOUND_ALLOW_LOOPBACK="true")
    receiver = make_receiver()
    key = make_key("webhooks:manage")

    (created,) = session_calls(url, key, [("create_webhook", {"url": receiver.url, "events": ["draft.confirmed"]})])
    assert not created.is_error, created.structured_content
    hook = created.structured_content
    assert hook["secret"].startswith("whsec_") and hook["events"] == ["draft.confirmed"]
    assert Webhook.objects.filter(pk=hook["id"], url=receiver.url).exists()

    tested, listed = session_calls(url, key, [("test_webhook", {"id": hook["id"]}), ("list_webhooks", {})])
    assert not tested.is_error, tested.structured_content
    assert tested.structured_content["event"] == "test"
    assert [item["id"] for item in listed.structured_content["items"]] == [hook["id"]]

    deliver_due()  # the worker's part: the signed test event reaches the endpoint
    assert receiver.wait_for(1)
    request = receiver.requests[0]
    body = StandardWebhook(hook["secret"]).verify(request.body, request.headers)
    assert body["event"] == "test" and body["data"]["webhookId"] == hook["id"]

    deleted, listed_after, again = session_calls(
        url,
        key,
        [("delete_webhook", {"id": hook["id"]}), ("list_webhooks", {}), ("delete_webhook", {"id": hook["id"]})],
    )
    assert deleted.structured_content["id"] == hook["id"]
    assert listed_after.structured_content["total"] == 0
    assert again.is_error and again.structured_content["status"] == 404


def test_an_agent_reads_deliveries_redelivers_rotates_the_secret_and_re_enables_an_endpoint(
    mcp_server_with,
    make_key,
    make_receiver,  # noqa: F811 - the fixture imported above
    settings,
):
    settings.OUTBOUND_ALLOW_LOOPBACK = True  # this process delivers; the server checks the URL
    url = mcp_server_with(OUTBOUND_ALLOW_LOOPBACK="true")
    receiver = make_receiver(statuses=[500])  # the first attempt fails, the next ones succeed
    key = make_key("webhooks:manage")
    (created,) = session_calls(url, key, [("create_webhook", {"url": receiver.url})])
    hook = created.structured_content
    (tested,) = session_calls(url, key, [("test_webhook", {"id": hook["id"]})])
    deliver_due()
    assert receiver.wait_for(1)

    listed, failed, succeeded, bogus = session_calls(
        url,
        key,
        [
            ("list_webhook_deliveries", {"id": hook["id"]}),
            ("list_webhook_deliveries", {"id": hook["id"], "status": "Pending"}),
            ("list_webhook_deliveries", {"id": hook["id"], "status": "Succeeded"}),
            ("list_webhook_deliveries", {"id": hook["id"], "colour": "red"}),
        ],
    )
    page = listed.structured_content
    assert [item["id"] for item in page["items"]] == [tested.structured_content["id"]]
    assert page["total"] == 1 and page["next"] is None
    assert page["items"][0]["attemptLog"][0]["statusCode"] == 500
    assert failed.structured_content["total"] == 1  # waiting for its retry
    assert succeeded.structured_content["total"] == 0  # the status filter filters
    assert bogus.is_error and bogus.structured_content["errors"][0]["field"] == "colour"

    (rotated,) = session_calls(url, key, [("rotate_webhook_secret", {"id": hook["id"], "overlapHours": 0})])
    new_secret = rotated.structured_content["secret"]
    assert new_secret.startswith("whsec_") and new_secret != hook["secret"]
    (again,) = session_calls(
        url, key, [("redeliver_webhook_delivery", {"id": hook["id"], "deliveryId": tested.structured_content["id"]})]
    )
    assert not again.is_error, again.structured_content
    assert again.structured_content["id"] == tested.structured_content["id"]
    deliver_due()
    assert receiver.wait_for(2)
    request = receiver.requests[1]
    assert StandardWebhook(new_secret).verify(request.body, request.headers)["event"] == "test"

    Webhook.objects.filter(pk=hook["id"]).update(active=False, disabled_reason="Failed 8 times.")
    disabled, enabled = session_calls(
        url,
        key,
        [
            ("redeliver_webhook_delivery", {"id": hook["id"], "deliveryId": tested.structured_content["id"]}),
            ("enable_webhook", {"id": hook["id"]}),
        ],
    )
    assert disabled.is_error and disabled.structured_content["code"] == "webhook_disabled"
    assert not enabled.is_error and enabled.structured_content["active"] is True
    assert Webhook.objects.get(pk=hook["id"]).active


def test_a_webhook_url_refused_by_rest_is_refused_naming_the_field(mcp_url, make_key):
    (result,) = session_calls(mcp_url, make_key("webhooks:manage"), [("create_webhook", {"url": "ftp://x"})])
    assert result.is_error
    assert result.structured_content["errors"][0]["field"] == "url"


def test_recurring_templates_take_every_fiat_amount_and_pause_resume_and_delete(mcp_url, make_key):
    key = make_key("templates:manage")
    draft = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "fiatCurrency": "EUR"}
    results = session_calls(
        mcp_url,
        key,
        [
            ("create_recurring_template", {"interval": "Monthly", "draft": draft | {"fiatAmount": amount}})
            for amount in AMOUNTS
        ],
    )
    for amount, result in zip(AMOUNTS, results, strict=True):
        assert not result.is_error, (amount, result.structured_content)
        assert result.structured_content["draft"]["fiatAmount"] == amount
        stored = RecurringTemplate.objects.get(pk=result.structured_content["id"]).draft["fiatAmount"]
        assert Decimal(str(stored)) == Decimal(repr(amount))  # 19.99 exactly, not its binary float
    first = results[0].structured_content["id"]

    listed, paused, resumed, deleted, gone = session_calls(
        mcp_url,
        key,
        [
            ("list_recurring_templates", {"pageSize": 2}),
            ("pause_recurring_template", {"id": first}),
            ("resume_recurring_template", {"id": first}),
            ("delete_recurring_template", {"id": first}),
            ("list_recurring_templates", {}),
        ],
    )
    assert listed.structured_content["total"] == 3 and len(listed.structured_content["items"]) == 2
    assert paused.structured_content["paused"] is True and paused.structured_content["nextRunAt"] is None
    assert resumed.structured_content["paused"] is False and resumed.structured_content["nextRunAt"]
    assert deleted.structured_content["id"] == first
    assert first not in [item["id"] for item in gone.structured_content["items"]]


def test_a_recurring_template_with_a_string_amount_is_refused_as_rest_refuses_it(mcp_url, make_key):
    draft = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "fiatCurrency": "EUR"}
    (result,) = session_calls(
        mcp_url,
        make_key("templates:manage"),
        [("create_recurring_template", {"interval": "Daily", "draft": draft | {"fiatAmount": "19.99"}})],
    )
    assert result.is_error, result.structured_content
    assert result.structured_content["errors"][0]["field"] == "draft.fiatAmount"


def test_the_address_book_tools_add_list_and_delete_and_a_draft_uses_an_entry(mcp_url, make_key):
    key = make_key("addressbook:manage", "drafts:read", "drafts:write")
    added, bad = session_calls(
        mcp_url,
        key,
        [
            (
                "add_address",
                {"network": "Base", "address": ADDRESSES["Base"].lower(), "direction": "Receiving", "label": "shop"},
            ),
            ("add_address", {"network": "Mainnet", "address": ADDRESSES["Base"], "direction": "Receiving"}),
        ],
    )
    assert not added.is_error, added.structured_content
    entry = added.structured_content
    assert entry["address"] == ADDRESSES["Base"]  # stored in its checksummed form
    assert bad.is_error and bad.structured_content["errors"][0]["field"] == "address"

    listed, draft = session_calls(
        mcp_url,
        key,
        [
            ("list_address_book", {"network": "Base", "direction": "Receiving"}),
            (
                "create_draft",
                {
                    "network": "Base",
                    "currency": "USDC",
                    "addressBookId": entry["id"],
                    "fiatCurrency": "EUR",
                    "fiatAmount": 19.99,
                },
            ),
        ],
    )
    assert [item["id"] for item in listed.structured_content["items"]] == [entry["id"]]
    assert not draft.is_error, draft.structured_content
    assert draft.structured_content["receiverAddress"] == ADDRESSES["Base"]

    (deleted,) = session_calls(mcp_url, key, [("delete_address", {"id": entry["id"]})])
    assert deleted.structured_content["id"] == entry["id"]
    assert not AddressBookEntry.objects.filter(pk=entry["id"]).exists()


def test_the_new_tools_need_their_scopes(mcp_url, make_key):
    key = make_key("drafts:read")
    results = session_calls(
        mcp_url, key, [("list_webhooks", {}), ("list_recurring_templates", {}), ("list_address_book", {})]
    )
    assert [json.loads(r.content[0].text)["requiredScope"] for r in results] == [
        "webhooks:manage",
        "templates:manage",
        "addressbook:manage",
    ]

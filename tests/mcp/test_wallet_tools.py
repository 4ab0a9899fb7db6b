"""The receiving-wallet tools, called through the official MCP SDK client as an agent would: they
answer what REST answers, drafts then get the wallet's addresses, and a private key is refused
as REST refuses it, never stored, answered or logged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import connection

from tests.drafts.test_receiving_wallets import ACCOUNT_PRV, MAIN_PRV, TESTNET_0, TESTNET_1, TPUB, WPKH
from tests.mcp.conftest import in_session
from wallets.models import ReceivingWallet

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


REGISTER = {"network": "Testnet", "descriptor": WPKH, "label": "shop", "idempotencyKey": "w1"}


def session_calls(url: str, key: str, calls: list[tuple[str, dict]]) -> list:
    async def work(session):
        await session.list_tools()  # the client then checks each structured result against its output schema
        return [await session.call_tool(name, arguments) for name, arguments in calls]

    return in_session(url, key, work)


def test_an_agent_registers_a_wallet_reads_it_and_drafts_get_its_addresses_in_turn(mcp_url, make_key):
    key = make_key("wallets:write", "wallets:read", "drafts:write")
    (created,) = session_calls(
        mcp_url,
        key,
        [("create_receiving_wallet", REGISTER)],
    )
    assert not created.is_error, created.structured_content
    wallet = created.structured_content
    assert [a["address"] for a in wallet["firstAddresses"][:2]] == [TESTNET_0, TESTNET_1]
    assert wallet["nextIndex"] == 0 and wallet["gapLimit"] == 20

    draft = {"network": "Testnet", "receivingWalletId": wallet["id"], "amountSats": 25_000}
    again, first, second, read, listed = session_calls(
        mcp_url,
        key,
        [
            ("create_receiving_wallet", REGISTER),
            ("create_draft", draft),
            ("create_draft", draft),
            ("get_receiving_wallet", {"id": wallet["id"]}),
            ("list_receiving_wallets", {}),
        ],
    )
    assert again.structured_content["id"] == wallet["id"]  # the same key: the same wallet, not a conflict
    assert [first.structured_content["receiverAddress"], second.structured_content["receiverAddress"]] == [
        TESTNET_0,
        TESTNET_1,
    ]
    assert read.structured_content["nextIndex"] == 2 and read.structured_content["unusedAddresses"] == 2
    assert [item["id"] for item in listed.structured_content["items"]] == [wallet["id"]]


def test_the_wallet_tools_need_the_wallet_scopes(mcp_url, make_key):
    reader = make_key("wallets:read")
    (refused,) = session_calls(mcp_url, reader, [("create_receiving_wallet", REGISTER)])
    assert refused.is_error and refused.structured_content["status"] == 403
    assert "wallets:write" in json.dumps(refused.structured_content)
    assert not ReceivingWallet.objects.exists()

    async def names(session):
        return {tool.name for tool in (await session.list_tools()).tools}

    assert {"list_receiving_wallets", "get_receiving_wallet"} <= in_session(mcp_url, reader, names)
    assert "create_receiving_wallet" not in in_session(mcp_url, reader, names)
    assert not {"list_receiving_wallets", "create_receiving_wallet"} & in_session(
        mcp_url, make_key("drafts:read"), names
    )


@pytest.mark.parametrize(
    ("where", "secret"),
    [
        ("descriptor", f"wpkh([73c5da0a/84h/1h/0h]{ACCOUNT_PRV}/0/*)"),
        ("descriptor", MAIN_PRV),
        ("label", ACCOUNT_PRV),
        ("network", MAIN_PRV),
        ("scriptType", ACCOUNT_PRV),
        ("comment", MAIN_PRV),
    ],
)
def test_a_private_key_is_refused_as_rest_refuses_it_and_never_answered_stored_or_logged(
    mcp_server_with, make_key, tmp_path, where, secret
):
    url = mcp_server_with(LOG_LEVEL="DEBUG")
    key = make_key("wallets:write")
    body = {"network": "Testnet", "descriptor": f"wpkh({TPUB}/0/*)", where: secret}
    (refused,) = session_calls(url, key, [("create_receiving_wallet", {**body, "idempotencyKey": "k"})])
    assert refused.is_error
    assert refused.structured_content["code"] == "private_key_refused"
    assert refused.structured_content["status"] == 400
    assert secret not in json.dumps(refused.structured_content)
    assert all(secret not in getattr(part, "text", "") for part in refused.content)
    assert not ReceivingWallet.objects.exists()
    logs = "".join(path.read_text(errors="replace") for path in Path(tmp_path).glob("mcp-*.log"))
    assert "Uvicorn running" in logs or "Application startup" in logs  # the log was read
    assert secret not in logs
    with connection.cursor() as cursor:
        cursor.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
        for (table,) in cursor.fetchall():
            cursor.execute(f'SELECT count(*) FROM "{table}" WHERE "{table}"::text LIKE %s', [f"%{secret[4:44]}%"])
            assert cursor.fetchone()[0] == 0, table

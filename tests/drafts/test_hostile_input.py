"""The standing hostile-input table for POST /api/v1/drafts: every entry is a 400 naming the
right field (or, for text that is not JSON at all, no field), nothing is written, never a 500."""

import json
import urllib.error
import urllib.request

import pytest

from drafts.models import Draft
from tests.drafts.conftest import ADDRESSES

USDC_BASE = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"]}
BTC_MAINNET = {"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"]}
FIAT = {**USDC_BASE, "fiatCurrency": "EUR"}


def with_raw(base: dict, key: str, raw: str) -> str:
    """base as JSON with `"key": raw` spliced in verbatim (raw JSON text, valid or not)."""
    text = json.dumps(base)
    return text[:-1] + f', "{key}": {raw}' + "}"


CASES = [
    # numbers as strings, and numbers that only look like integers
    ("amount as a string", with_raw(USDC_BASE, "amountSats", '"1234567"'), "amountSats"),
    ("amount as a padded string", with_raw(USDC_BASE, "amountSats", '" 1234567 "'), "amountSats"),
    ("amount with a zero fraction", with_raw(USDC_BASE, "amountSats", "8951270.0"), "amountSats"),
    ("amount with an exponent", with_raw(USDC_BASE, "amountSats", "1e6"), "amountSats"),
    ("amount with decimals the base unit has not", with_raw(USDC_BASE, "amountSats", "1.5"), "amountSats"),
    ("amount as a boolean", with_raw(USDC_BASE, "amountSats", "true"), "amountSats"),
    ("negative amount", with_raw(USDC_BASE, "amountSats", "-5"), "amountSats"),
    ("zero amount", with_raw(USDC_BASE, "amountSats", "0"), "amountSats"),
    ("amount beyond int64", with_raw(USDC_BASE, "amountSats", "9223372036854775808"), "amountSats"),
    ("amount of 5,000 digits", with_raw(USDC_BASE, "amountSats", "9" * 5000), "amountSats"),
    ("amount above the asset's supply", with_raw(BTC_MAINNET, "amountSats", "2100000000000001"), "amountSats"),
    ("fiat amount as a string", with_raw(FIAT, "fiatAmount", '"25"'), "fiatAmount"),
    ("fiat amount with 9 decimals", with_raw(FIAT, "fiatAmount", "25.123456789"), "fiatAmount"),
    ("negative fiat amount", with_raw(FIAT, "fiatAmount", "-1"), "fiatAmount"),
    ("zero fiat amount", with_raw(FIAT, "fiatAmount", "0"), "fiatAmount"),
    ("huge fiat amount", with_raw(FIAT, "fiatAmount", "1e400"), "fiatAmount"),
    ("fiat amount of 5,000 digits", with_raw(FIAT, "fiatAmount", "9" * 5000), "fiatAmount"),
    # currency codes folded by Unicode rules, or not codes at all
    ("long s folds to SEK", json.dumps({**USDC_BASE, "fiatCurrency": "ſek", "fiatAmount": 25}), "fiatCurrency"),
    ("dotless i folds to INR", json.dumps({**USDC_BASE, "fiatCurrency": "ınr", "fiatAmount": 25}), "fiatCurrency"),
    ("four-letter currency", json.dumps({**USDC_BASE, "fiatCurrency": "EURO", "fiatAmount": 25}), "fiatCurrency"),
    ("numeric currency", json.dumps({**USDC_BASE, "fiatCurrency": 978, "fiatAmount": 25}), "fiatCurrency"),
    # enums and flags only in their exact JSON form
    ("network in lower case", json.dumps({**USDC_BASE, "network": "base", "amountSats": 1000}), "network"),
    ("network as a number", json.dumps({**USDC_BASE, "network": 1, "amountSats": 1000}), "network"),
    ("currency in lower case", json.dumps({**USDC_BASE, "currency": "usdc", "amountSats": 1000}), "currency"),
    ("singleOutput as a string", json.dumps({**USDC_BASE, "singleOutput": "true", "amountSats": 1000}), "singleOutput"),
    ("expiry as a string", json.dumps({**USDC_BASE, "expiryHours": "24", "amountSats": 1000}), "expiryHours"),
    ("expiry of zero", json.dumps({**USDC_BASE, "expiryHours": 0, "amountSats": 1000}), "expiryHours"),
    ("expiry of a century", json.dumps({**USDC_BASE, "expiryHours": 876000, "amountSats": 1000}), "expiryHours"),
    (
        "confirmations as 1.0",
        with_raw({**USDC_BASE, "amountSats": 1000}, "requiredConfirmations", "1.0"),
        "requiredConfirmations",
    ),  # fmt: skip
    ("an unknown field", json.dumps({**USDC_BASE, "amountSats": 1000, "amount": 1}), "amount"),
    # addresses valid somewhere, but not on this network
    (
        "testnet address on Mainnet",
        json.dumps({**BTC_MAINNET, "receiverAddress": ADDRESSES["Testnet"], "amountSats": 10_000}),
        "receiverAddress",
    ),  # fmt: skip
    (
        "mainnet address on Testnet",
        json.dumps({"network": "Testnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 10_000}),
        "receiverAddress",
    ),  # fmt: skip
    (
        "Solana address on Base",
        json.dumps({**USDC_BASE, "receiverAddress": ADDRESSES["Solana"], "amountSats": 1000}),
        "receiverAddress",
    ),  # fmt: skip
    (
        "EVM address on Solana",
        json.dumps({"network": "Solana", "currency": "SOL", "receiverAddress": ADDRESSES["Base"], "amountSats": 1000}),
        "receiverAddress",
    ),  # fmt: skip
    (
        "EVM address with a broken checksum",
        json.dumps({**USDC_BASE, "amountSats": 1000, "receiverAddress": "0x8617e340B3D01FA5F11F306F4090FD50E238070D"}),
        "receiverAddress",
    ),  # fmt: skip
    (
        "address with a control character",
        json.dumps({**USDC_BASE, "amountSats": 1000, "receiverAddress": ADDRESSES["Base"] + "\u0000"}),
        "receiverAddress",
    ),  # fmt: skip
    # receivers that can never be paid
    (
        "USDC's own contract as receiver",
        json.dumps({**USDC_BASE, "amountSats": 1000, "receiverAddress": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}),
        "receiverAddress",
    ),  # fmt: skip
    (
        "the Solana system program",
        json.dumps(
            {
                "network": "Solana",
                "currency": "SOL",
                "amountSats": 1000,
                "receiverAddress": "11111111111111111111111111111111",
            }
        ),
        "receiverAddress",
    ),  # fmt: skip
    ("a 1-sat MultiOutput draft", json.dumps({**BTC_MAINNET, "amountSats": 1}), "amountSats"),
    # text that ends up in URIs, PDFs and e-mails
    ("memo with a NUL", json.dumps({**USDC_BASE, "amountSats": 1000, "memo": "a\u0000b"}), "memo"),
    ("memo with a terminal escape", json.dumps({**USDC_BASE, "amountSats": 1000, "memo": "\u001b[31mred"}), "memo"),
    ("memo with a bidi override", json.dumps({**USDC_BASE, "amountSats": 1000, "memo": "abc\u202edcba"}), "memo"),
    ("memo of 100 KB", json.dumps({**USDC_BASE, "amountSats": 1000, "memo": "m" * 100_000}), "memo"),
    ("memo with DEL", json.dumps({**USDC_BASE, "amountSats": 1000, "memo": "a\u007fb"}), "memo"),
    ("memo with a C1 control", json.dumps({**USDC_BASE, "amountSats": 1000, "memo": "a\u009b2Jb"}), "memo"),
    ("memo with a line separator", json.dumps({**USDC_BASE, "amountSats": 1000, "memo": "a\u2028b"}), "memo"),
    (
        "lightning address with an escape",
        json.dumps({**USDC_BASE, "amountSats": 1000, "lightningAddress": "\u001b]8;;x\u0007pay@example.com"}),
        "lightningAddress",
    ),  # fmt: skip
    # JSON that should never be read leniently
    (
        "duplicate keys",
        '{"network": "Base", "currency": "USDC", "amountSats": 1, "amountSats": 5000, '
        f'"receiverAddress": "{ADDRESSES["Base"]}"}}',
        "amountSats",
    ),  # fmt: skip
    ("NaN", with_raw(USDC_BASE, "amountSats", "NaN"), None),
    ("Infinity", with_raw(FIAT, "fiatAmount", "Infinity"), None),
    ("-Infinity", with_raw(FIAT, "fiatAmount", "-Infinity"), None),
    ("deep nesting", with_raw(USDC_BASE, "memo", "[" * 5000 + "]" * 5000), None),
    # big bodies: every error is named, the document stays small (test below)
    (
        "99 KB of unknown fields",
        json.dumps({**USDC_BASE, **{f"f{i:04}" + "x" * 90: 1 for i in range(950)}}),
        "f0000" + "x" * 90,
    ),  # fmt: skip
]


def utf8(body: dict) -> str:
    return json.dumps(body, ensure_ascii=False)


EMOJI = "\U0001f600"
BIG_BODIES = [
    ("950 unknown fields with long names", utf8({**USDC_BASE, **{f"f{i:04}" + "x" * 90: 1 for i in range(950)}})),
    ("1,000 unknown fields named by emoji", utf8({**USDC_BASE, **{f"{i}" + EMOJI * 22: 1 for i in range(1000)}})),
    ("a network of 99 KB", utf8({**USDC_BASE, "amountSats": 1000, "network": EMOJI * 24_000})),
    ("a memo of 99 KB of NULs", utf8({**USDC_BASE, "amountSats": 1000, "memo": "\u0000" * 16_000})),
    (
        "every field wrong at length",
        utf8(
            {
                name: EMOJI * 3_000
                for name in (
                    "network",
                    "currency",
                    "receiverAddress",
                    "memo",
                    "fiatCurrency",
                    "bolt11",
                    "lightningAddress",
                )
            }
        ),
    ),  # fmt: skip
]


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "field"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_hostile_input_is_a_400_naming_the_field(api_client, body, field):
    response = api_client.generic("POST", "/api/v1/drafts", body.encode(), content_type="application/json")
    assert response.status_code == 400, response.content[:500]
    problem = response.json()
    assert problem["status"] == 400 and problem["type"].endswith(problem["code"])
    fields = [error["field"] for error in problem["errors"]]
    if field is None:
        assert fields == [] and problem["code"] == "malformed_json"
    else:
        assert field in fields, problem
    text = response.content.decode()
    assert "Traceback" not in text and "set_int_max_str_digits" not in text
    assert not Draft.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("body", [case[1] for case in BIG_BODIES], ids=[case[0] for case in BIG_BODIES])
def test_a_big_hostile_body_gets_a_small_problem_document(api_client, body):
    assert 60_000 < len(body.encode()) < 100_000
    response = api_client.generic("POST", "/api/v1/drafts", body.encode(), content_type="application/json")
    assert response.status_code == 400 and response["Content-Type"] == "application/problem+json"
    assert len(response.content) < 8192, len(response.content)
    problem = response.json()
    assert problem["errors"] and all(error["field"] for error in problem["errors"])
    assert len(problem["errors"]) + problem.get("errorsOmitted", 0) >= 1
    assert not Draft.objects.exists()


@pytest.mark.django_db
def test_a_batch_of_big_hostile_items_gets_a_small_document(api_client):
    item = {"draft": {"network": EMOJI * 300, "memo": "\u0000" * 300, "receiverAddress": "x" * 300}}
    body = utf8({"items": [item] * 25})
    assert 60_000 < len(body.encode()) < 100_000
    response = api_client.generic("POST", "/api/v1/drafts/batch", body.encode(), content_type="application/json")
    assert response.status_code < 500 and len(response.content) < 8192, len(response.content)
    assert all(item["error"] for item in response.json())
    assert not Draft.objects.exists()


# --- The same table over MCP: create_draft is the REST operation, read as strictly -----------


def mcp_post(url: str, key: str, raw: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(  # noqa: S310 - loopback only
        url,
        data=raw,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {key}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback only
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def tool_call(arguments: str) -> bytes:
    """A tools/call of create_draft with the arguments spliced in as raw JSON text."""
    envelope = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "create_draft", "arguments": '
    return (envelope + arguments + "}}").encode()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("body", "field"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_hostile_input_over_mcp_is_refused_naming_the_field(mcp_url, make_key, body, field):
    status, answer = mcp_post(mcp_url, make_key(), tool_call(body))
    if "error" in answer:  # refused as the body was read: a JSON-RPC parse error carrying the problem
        assert status == 400 and answer["error"]["code"] == -32700, answer
        problem = answer["error"]["data"]
    else:  # refused by the tool: a tool error whose JSON is the problem document
        assert status == 200 and answer["result"]["isError"], answer
        problem = answer["result"]["structuredContent"]
    assert problem["status"] == 400
    fields = [error["field"] for error in problem["errors"]]
    if field is None:
        assert fields == [] and problem["code"] == "malformed_json"
    else:
        assert field in fields, problem
    assert len(json.dumps(answer)) < 8192 * 2  # the problem document, and its text once more
    assert not Draft.objects.exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_repeated_key_anywhere_in_an_mcp_body_is_refused(mcp_url, make_key):
    key = make_key()
    good = json.dumps({**USDC_BASE, "amountSats": 5000})
    repeated_name = tool_call(good).replace(
        b'"name": "create_draft"', b'"name": "get_fee_schedule", "name": "create_draft"'
    )
    status, answer = mcp_post(mcp_url, key, repeated_name)
    assert status == 400 and answer["error"]["data"]["errors"][0] == {
        "field": "name",
        "code": "duplicate_key",
        "message": "Given more than once in the JSON object.",
    }
    assert not Draft.objects.exists()
    status, answer = mcp_post(mcp_url, key, tool_call(good))
    assert status == 200 and not answer["result"]["isError"], answer
    assert Draft.objects.count() == 1

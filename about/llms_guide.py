"""The llms.txt sections an agent needs to go from nothing to `draft.confirmed` at its own webhook:
the assets (from payments.registry), the request fields (from the create_draft tool schema, which
comes from the REST serializer), the Idempotency-Key header, and webhook events, headers and the
signature scheme (from webhooks.models and webhooks.signing). Generated, so it cannot drift."""

from __future__ import annotations

from django.conf import settings

VERIFY_SNIPPET = '''import base64, hashlib, hmac, time

def verify(secret: str, headers: dict, body: bytes, tolerance: int = 300) -> bool:
    """secret: the whsec_... shown once at creation; headers: lower-cased names; body: the raw bytes."""
    message_id, timestamp = headers["webhook-id"], headers["webhook-timestamp"]
    if abs(time.time() - int(timestamp)) > tolerance:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(expected, given) for given in headers["webhook-signature"].split())'''


def agent_guide_lines(base: str) -> list[str]:
    return [
        *_steps_lines(base),
        *_asset_lines(),
        *_draft_lines(base),
        *_pay_link_lines(base),
        *_rules_lines(),
        *_webhook_lines(base),
        *_test_payment_lines(),
        *_test_mode_lines(base),
    ]


def _steps_lines(base: str) -> list[str]:
    return [
        "",
        "## From nothing to draft.confirmed at your webhook",
        "",
        "1. An API key (`Authorization: Bearer pdk_...`) with the scopes drafts:read, drafts:write, "
        "webhooks:manage (MCP: the same key on every call).",
        f"2. Register your endpoint: POST {base}/api/v1/webhooks (MCP `create_webhook`); keep the `secret` it "
        "shows once. POST /api/v1/webhooks/{id}/test (MCP `test_webhook`) checks your verification now.",
        "3. Create a draft: POST /api/v1/drafts (MCP `create_draft`) with an `Idempotency-Key` header.",
        "4. What to pay: GET /api/v1/drafts/{id}/tx-template (MCP `get_tx_template`) for on-chain Bitcoin, else "
        "the draft's `paymentUri`.",
        '5. A test payment: see "A test payment" and "Test mode" below.',
        '6. `draft.seen`, then `draft.confirmed` arrive at your endpoint, signed as in "Webhooks"; '
        "GET /api/v1/drafts/{id}/status (MCP `get_draft_status`) says the same.",
    ]


def _pay_link_lines(base: str) -> list[str]:
    from mcp_server.tools import BY_NAME

    schema = BY_NAME["create_payment_request"].as_mcp().input_schema
    required = set(schema.get("required", []))
    lines = ["", "## Pay links: POST /api/v1/payment-requests", ""]
    for name, prop in schema["properties"].items():
        if name != "idempotencyKey":
            must = "required" if name in required else "optional"
            lines.append(f"- `{name}` ({must}): {prop.get('description', '')}")
    lines += [
        "",
        "The answer's `payUrl` is the payer's page; when the payer picks an option a draft is made "
        "(its events carry `paymentRequestId` and `orderId`).",
    ]
    return lines


def _rules_lines() -> list[str]:
    return [
        "",
        "## Body rules (every request body)",
        "",
        '- Numbers are JSON numbers: `19.99`, `20`; `"19.99"` is refused naming the field.',
        "- Codes and enums exactly as listed: `USDC`, `Base`, `EUR` (upper case); `usdc` or `eur` is refused.",
        "- Unknown fields are refused; an operation that takes no body (a cancel, a GET) refuses one "
        "(`body_not_allowed`).",
        "- Errors are `application/problem+json`: `code`, `detail`, and `errors[]` with `field`, `code`, `message`.",
    ]


def _test_payment_lines() -> list[str]:
    return [
        "",
        "## A test payment on a local chain",
        "",
        "On the operator's machine: `manage.py devchain` runs anvil as Sepolia and Base Sepolia with test USDC, "
        "USDT, EURC and WBTC and writes their settings into .env (restart the service once); "
        "`manage.py devpay <draft id or pay link id>` then pays the draft exactly as it asks, from a funded "
        "account. The watcher sees it within seconds: Pending -> Seen -> Confirmed, with the webhooks.",
    ]


def _test_mode_lines(base: str) -> list[str]:
    from accounts.modes import test_networks
    from drafts.simulation import Outcome

    return [
        "",
        "## Test mode: payments on demand",
        "",
        "A test key (`pdk_test_...`: `manage.py issue_api_key --test-mode`, the dashboard's key form, or "
        'POST /api/v1/api-keys with `"testMode": true`) sees and makes only test objects (drafts, pay links, '
        "templates, webhooks), only on test networks "
        f"({', '.join(test_networks())}); a main network is refused (`live_network_in_test_mode`). Test fees never "
        "accrue. A live key never sees test objects, nor a test key live ones. Every object says `livemode`, and "
        "so does a draft event's `data`. Register a webhook with the test key: only it gets the test objects' events.",
        "",
        "Pay a test draft as a chain watcher would see it (test keys only; a live key gets 403 `test_mode_only`):",
        "",
        f'- POST {base}/api/v1/test-helpers/drafts/{{id}}/pay, body `{{"outcome": "exact", "confirmations": n}}` '
        "(both optional; `confirmations` defaults to the draft's `requiredConfirmations`, 0 leaves it Seen):",
        *[f"  - `{outcome.value}`: {outcome.label}" for outcome in Outcome],
        f"- POST {base}/api/v1/test-helpers/drafts/{{id}}/expire: a Pending draft expires now (`draft.expired`).",
        f"- POST {base}/api/v1/test-helpers/drafts/{{id}}/reorg: the payment of a Seen, AmountMismatch or not yet "
        "final Confirmed draft leaves the chain; back to Pending (`draft.payment_reverted`, `paymentReverted`).",
        "",
        "They answer the draft and go through the same door as real payments: `draft.seen` and "
        "`draft.confirmed` reach your test webhook as they would in production. MCP: `test_pay_draft`, "
        '`test_expire_draft`, `test_reorg_draft`. A test-mode pay link\'s page has a "Simulate payment" button.',
        "A refund of a test draft is a test refund: approving it makes a test payout draft, which the same `pay` "
        "helper pays, and the refund becomes Paid. A refund pays out on its payment's side, test networks for a "
        "test-network payment, main networks for a main-network one (`refund_network_mismatch` otherwise).",
    ]


def _asset_lines() -> list[str]:
    from payments.registry import all_assets

    enabled = set(settings.ENABLED_NETWORKS)
    lines = [
        "",
        "## Currencies and networks",
        "",
        "Amounts are integers in the asset's base units (`amountSats`): one whole unit is 10^decimals base units. "
        "Only the combinations below exist; a draft names both `network` and `currency`.",
        "",
        "| currency | network | decimals | methods | token address | testnet | enabled here |",
        "|---|---|---|---|---|---|---|",
    ]
    for asset in all_assets():
        lines.append(
            f"| {asset.currency} | {asset.network} | {asset.decimals} | "
            f"{', '.join(str(method) for method in asset.methods)} | {asset.token_address or '-'} | "
            f"{'yes' if asset.is_testnet else 'no'} | {'yes' if str(asset.network) in enabled else 'no'} |"
        )
    return lines


def _draft_lines(base: str) -> list[str]:
    from mcp_server.tools import BY_NAME

    schema = BY_NAME["create_draft"].as_mcp().input_schema
    required = set(schema.get("required", []))
    lines = [
        "",
        "## Creating a draft: POST /api/v1/drafts",
        "",
        "Body (JSON; numbers unquoted; unknown fields refused):",
        "",
    ]
    for name, prop in schema["properties"].items():
        if name == "idempotencyKey":
            continue
        kinds = prop.get("type", "string")
        kinds = "/".join(kinds) if isinstance(kinds, list) else kinds
        values = f"; one of {', '.join(str(v) for v in prop['enum'] if v is not None)}" if "enum" in prop else ""
        must = "required" if name in required else "optional"
        lines.append(f"- `{name}` ({kinds}, {must}{values}): {prop.get('description', '')}")
    lines += [
        "",
        "Header `Idempotency-Key: <your unique id>` makes a retry safe: the same key and body within 24 hours "
        "answer the first result; the same key with another body is refused (`idempotency_key_reused`).",
        "",
        "```",
        f"curl -X POST {base}/api/v1/drafts -H 'Authorization: Bearer pdk_...' -H 'Idempotency-Key: order-42' \\",
        "  -H 'Content-Type: application/json' \\",
        '  -d \'{"network":"Base","currency":"USDC","receiverAddress":"0x...",'
        '"fiatCurrency":"EUR","fiatAmount":19.99}\'',
        "```",
        "",
        "Then: on-chain Bitcoin drafts give the exact outputs at GET /api/v1/drafts/{id}/tx-template; every other "
        "draft is paid with its `paymentUri`. The payer signs and broadcasts from their own wallet; the service "
        "matches the exact amount and moves the draft Pending -> Seen -> Confirmed "
        "(GET /api/v1/drafts/{id}/status, or the webhook below).",
    ]
    return lines


def _webhook_lines(base: str) -> list[str]:
    from webhooks.models import OPT_IN_EVENT_TYPES, EventType
    from webhooks.signing import SECRET_PREFIX, delivery_headers

    headers = delivery_headers(
        secret=SECRET_PREFIX + "AAAA",
        delivery_id="id",
        event_type="test",
        timestamp=0,
        body=b"{}",
        previous_secret=SECRET_PREFIX + "AAAA",
    )
    lines = [
        "",
        "## Webhooks",
        "",
        f'Register with POST {base}/api/v1/webhooks (scope webhooks:manage), body `{{"url": "https://...", '
        '"events": [...]}` (events optional: all but the opt-in ones). The answer shows the signing secret '
        f"(`{SECRET_PREFIX}...`) once. POST /api/v1/webhooks/{{id}}/test sends a `test` event.",
        "",
        "Events (opt-in ones only when named in `events`):",
        "",
    ]
    lines += [f"- `{event.value}`{' (opt-in)' if event in OPT_IN_EVENT_TYPES else ''}" for event in EventType]
    lines += [
        "",
        'Each delivery is a POST whose body is `{"id": "<event id>", "event": "<event name>", "createdAt": "...", '
        '"objectId": "<draft, pay link, refund or transfer id>", "sequence": <n>, "data": <the draft or pay link '
        "JSON>}`. `sequence` counts 1, 2, 3... over one object's events, and one endpoint gets one object's events "
        "in that order (the next waits until the previous succeeded or was given up): keep the last sequence "
        "you applied per objectId and ignore a delivery with a lower one. Headers:",
        "",
    ]
    lines += [f"- `{name}`" for name in headers]
    lines += [
        "",
        "Signatures, HMAC-SHA256 (Standard Webhooks): `webhook-signature` is `v1,` + base64(HMAC-SHA256(key, "
        "`{webhook-id}.{webhook-timestamp}.{raw body}`)) with key = base64-decoded secret after `whsec_`; "
        "several space-separated values during a secret rotation, any one matching is enough. "
        "`X-Service-Signature` is `sha256=` + hex(HMAC-SHA256(the whole secret string, raw body)). "
        f"Answer 2xx within {settings.WEBHOOKS_TIMEOUT_SECONDS} seconds; other answers are retried with backoff. "
        "Verify with the raw body:",
        "",
        "```python",
        VERIFY_SNIPPET,
        "```",
        "",
        "Local development: webhook URLs must be public HTTPS, so do not register a local one. Run "
        "`python manage.py listen --forward-to http://localhost:3000/hook` (or docs/examples/listen.py, Python "
        "standard library only, with PAYMENT_DRAFTS_API_KEY and PAYMENT_DRAFTS_URL) with a key carrying "
        "events:read: it long-polls GET /api/v1/events/stream and POSTs each event to your local URL with the "
        "headers above, signed with a forwarding secret it prints. "
        f"GET {base}/api/v1/events lists events (filters type, objectId, from, to; the key's mode); "
        'POST /api/v1/events/{id}/redeliver sends one again (optional body `{"webhookId": ...}`).',
    ]
    return lines

"""Forward your payment-drafts events to a local URL, signed like webhook deliveries.

Local development without exposing your machine: this reads your API key's events over the API
(a long poll of GET /api/v1/events/stream) and POSTs each one, in order, to the URL you give,
with the same headers a webhook delivery carries (X-Service-Signature, webhook-id,
webhook-timestamp, webhook-signature), keyed with a forwarding secret it prints. Your receiver
verifies them exactly as it verifies webhooks (docs/examples/webhook_receiver.py).
Python standard library only; the key needs the scope events:read (a test key forwards test events).

    PAYMENT_DRAFTS_API_KEY=pdk_test_... PAYMENT_DRAFTS_URL=https://payments.example.com \\
        python listen.py --forward-to http://localhost:3000/hook

Options: --secret whsec_... (sign with this one instead of a new one; also
$LISTEN_FORWARDING_SECRET), --events draft.seen,draft.confirmed (only these types),
--count N (stop after N events). It starts with the events recorded after it started.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

WAIT = 25  # seconds the service holds a poll open when there is nothing new


def api_get(base: str, key: str, path: str, query: dict) -> dict:
    url = f"{base}{path}?{urllib.parse.urlencode(query)}"
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 (http(s) only: main)
    with urllib.request.urlopen(request, timeout=WAIT + 30) as response:  # noqa: S310
        return json.loads(response.read())


def body_of(item: dict) -> bytes:
    """The body a webhook delivery of this event carries."""
    body = {
        "id": item["id"],
        "event": item["event"],
        "createdAt": item["createdAt"],
        "objectId": item["objectId"],
        "sequence": item["sequence"],
        "data": item["data"],
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def signed_headers(secret: str, message_id: str, event_type: str, body: bytes) -> dict:
    """The headers of a webhook delivery: both signature schemes, keyed as webhooks are."""
    timestamp = str(int(time.time()))
    service = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    key = base64.b64decode(secret.removeprefix("whsec_"))
    standard = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return {
        "Content-Type": "application/json",
        "X-Service-Event": event_type,
        "X-Service-Delivery": message_id,
        "X-Service-Signature": service,
        "webhook-id": message_id,
        "webhook-timestamp": timestamp,
        "webhook-signature": "v1," + base64.b64encode(standard).decode(),
    }


def forward(url: str, secret: str, item: dict) -> str:
    body = body_of(item)
    headers = signed_headers(secret, item["id"], item["event"], body)
    request = urllib.request.Request(url, data=body, headers=headers)  # noqa: S310 (http(s) only: main)
    try:
        with urllib.request.urlopen(request, timeout=15) as response:  # noqa: S310
            return str(response.status)
    except urllib.error.HTTPError as exc:
        return str(exc.code)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        return f"no answer: {getattr(exc, 'reason', exc)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forward-to", required=True)
    parser.add_argument("--secret", default=os.environ.get("LISTEN_FORWARDING_SECRET", ""))
    parser.add_argument("--events", default="")
    parser.add_argument("--count", type=int, default=None)
    args = parser.parse_args()
    key = os.environ["PAYMENT_DRAFTS_API_KEY"]
    base = os.environ.get("PAYMENT_DRAFTS_URL", "http://127.0.0.1:8000").rstrip("/")
    if not (base.startswith(("http://", "https://")) and args.forward_to.startswith(("http://", "https://"))):
        parser.error("PAYMENT_DRAFTS_URL and --forward-to must be http:// or https:// URLs")
    secret = args.secret or "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()

    newest = api_get(base, key, "/api/v1/events", {"pageSize": 1})["items"]
    cursor = newest[0]["id"] if newest else None
    print(f"Ready. Forwarding the events of this key to {args.forward_to}", flush=True)
    print(f"Your forwarding secret is {secret}", flush=True)
    forwarded = 0
    while args.count is None or forwarded < args.count:
        query = {"wait": WAIT} | ({"startingAfter": cursor} if cursor else {})
        if args.events:
            query["type"] = args.events
        started = time.monotonic()
        try:
            page = api_get(base, key, "/api/v1/events/stream", query)
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403, 404, 400):
                print(f"The service refused: {exc.code} {exc.read().decode(errors='replace')}", file=sys.stderr)
                return 1
            time.sleep(2)
            continue
        except (urllib.error.URLError, TimeoutError, ConnectionError):
            time.sleep(2)  # the service restarting, the network: try again
            continue
        for item in page["items"]:
            status = forward(args.forward_to, secret, item)
            print(f"{item['createdAt']}  {item['event']:<28} {item['id']}  seq {item['sequence']}  --> [{status}]")
            sys.stdout.flush()
            forwarded += 1
            if args.count is not None and forwarded >= args.count:
                break
        cursor = page["next"]
        if not page["items"] and time.monotonic() - started < 1:
            time.sleep(2)  # the service answered without waiting (busy): ask again shortly
    return 0


if __name__ == "__main__":
    sys.exit(main())

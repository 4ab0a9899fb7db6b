"""A webhook receiver for the payment drafts service, using only the Python standard library.

Run it with the secret shown when you registered the endpoint:

    WEBHOOK_SECRET=whsec_... python webhook_receiver.py 8080

It verifies X-Service-Signature over the raw body in constant time (401 when the header
is missing or wrong), ignores a delivery id it has already processed (retries and
redeliveries reuse the id), and prints one JSON line per event it handles. After you
rotate the secret, deliveries also carry X-Service-Signature-Previous (the old secret's
signature) for the overlap window, so this receiver keeps working with either secret
while you switch it over.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ["WEBHOOK_SECRET"].encode()  # the whole string, "whsec_" included
MAX_BODY = 1024 * 1024

# Keep processed delivery ids in your database (a unique constraint) in production.
processed: set[str] = set()
processed_lock = threading.Lock()


def signature_is_valid(body: bytes, *headers: str | None) -> bool:
    """True when one of the signature headers matches; each is compared in constant time."""
    expected = ("sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()).encode()
    matches = [hmac.compare_digest(expected, header.encode("utf-8", "replace")) for header in headers if header]
    return any(matches)


def handle_event(event: str, data: dict, delivery_id: str) -> None:
    # Your business logic. One object's events come in `sequence` order, but a redelivery
    # can bring an older one: keep the last sequence applied per objectId and ignore a
    # lower one (docs/webhooks.md, Retries and ordering); reconcile payments by draftId,
    # orderId and the exact amount.
    print(json.dumps({"handled": event, "delivery": delivery_id, "data": data}), flush=True)


class WebhookHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self.answer(413)
        body = self.rfile.read(length)  # the raw bytes: verify before parsing JSON
        signatures = self.headers.get("X-Service-Signature"), self.headers.get("X-Service-Signature-Previous")
        if not signature_is_valid(body, *signatures):
            return self.answer(401)
        delivery_id = self.headers.get("X-Service-Delivery", "")
        with processed_lock:
            if delivery_id in processed:
                print(json.dumps({"duplicate": delivery_id}), flush=True)
                return self.answer(200)
            processed.add(delivery_id)
        try:
            payload = json.loads(body)
            handle_event(payload["event"], payload["data"], delivery_id)
        except Exception:
            with processed_lock:
                processed.discard(delivery_id)  # not handled: let the retry come in
            return self.answer(500)
        self.answer(200)

    def answer(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args) -> None:  # keep stdout for events
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    server = ThreadingHTTPServer(("127.0.0.1", port), WebhookHandler)
    print(json.dumps({"listening": server.server_address[1]}), flush=True)
    server.serve_forever()

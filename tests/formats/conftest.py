"""Fixtures for the payment-format tests: signed test invoices and a local LNURL-pay server.

Tests sign invoices with a throwaway key to get real BOLT11 strings; the service
itself never signs anything.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import bolt11
import pytest
from bolt11 import Bolt11, MilliSatoshi, TagChar, Tags
from coincurve import PrivateKey

from tests.ownservers import serve_in_background

INVOICE_DATE = 1_800_000_000  # 2027-01-15, fixed so expiry checks need no clock


@dataclass(frozen=True)
class NodeKey:
    private_hex: str
    public_hex: str


def new_node_key() -> NodeKey:
    key = PrivateKey(secrets.token_bytes(32))
    return NodeKey(key.to_hex(), key.public_key.format(compressed=True).hex())


@pytest.fixture
def node_key() -> NodeKey:
    return new_node_key()


def sign_invoice(
    key: NodeKey,
    *,
    amount_msat: int | None = 250_000_000,
    currency: str = "bc",
    date: int = INVOICE_DATE,
    expiry: int = 3600,
    description: str | None = "Draft 1 at the test shop",
    description_hash: str | None = None,
    payment_hash: str | None = None,
    keep_payee: bool = False,
) -> str:
    tags = Tags()
    tags.add(TagChar.payment_hash, payment_hash or secrets.token_hex(32))
    tags.add(TagChar.payment_secret, secrets.token_hex(32))
    if description_hash is not None:
        tags.add(TagChar.description_hash, description_hash)
    else:
        tags.add(TagChar.description, description)
    tags.add(TagChar.expire_time, expiry)
    if keep_payee:
        tags.add(TagChar.payee, key.public_hex)
    amount = MilliSatoshi(amount_msat) if amount_msat is not None else None
    invoice = Bolt11(currency=currency, date=date, tags=tags, amount_msat=amount)
    return bolt11.encode(invoice, key.private_hex, keep_payee=keep_payee)


@pytest.fixture
def make_invoice(node_key) -> Callable[..., str]:
    def make(**kwargs: Any) -> str:
        return sign_invoice(node_key, **kwargs)

    return make


# --- A local LNURL-pay server ----------------------------------------------------------

METADATA = json.dumps([["text/plain", "Pay alice at the test shop"], ["text/identifier", "alice@127.0.0.1"]])


@dataclass
class LnurlServer:
    """An LNURL-pay server on 127.0.0.1 whose misbehaviour a test picks with ``mode``."""

    port: int = 0
    mode: str = "ok"
    min_sendable: int = 1_000
    max_sendable: int = 1_000_000_000
    currency: str = "bc"
    verify: bool = True
    callback_url: str | None = None  # hand out this callback instead of our own
    verify_url: str | None = None  # hand out this LUD-21 verify URL instead of our own
    key: NodeKey = field(default_factory=new_node_key)
    callbacks: list[int] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"alice@127.0.0.1:{self.port}"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def pay_request(self) -> dict[str, Any]:
        body = {
            "tag": "payRequest",
            "callback": f"{self.base}/lnurlp/alice/callback?session=abc",
            "minSendable": self.min_sendable,
            "maxSendable": self.max_sendable,
            "metadata": METADATA,
        }
        if self.mode == "missing_fields":
            del body["callback"]
        if self.callback_url is not None:
            body["callback"] = self.callback_url
        if self.mode == "plain_http_callback":
            body["callback"] = "http://pay.example.com/callback"
        if self.mode == "not_pay_request":
            body["tag"] = "withdrawRequest"
        return body

    def invoice_for(self, amount_msat: int) -> dict[str, Any]:
        if self.mode == "wrong_amount":
            amount_msat += 1_000
        metadata = METADATA + (" " if self.mode == "wrong_hash" else "")
        description_hash = hashlib.sha256(metadata.encode()).hexdigest()
        payment_hash = secrets.token_hex(32)
        pr = sign_invoice(
            self.key,
            amount_msat=amount_msat,
            currency=self.currency,
            date=int(time.time()),
            description_hash=description_hash,
            payment_hash=payment_hash,
        )
        body: dict[str, Any] = {"pr": pr, "routes": []}
        if self.verify:
            body["verify"] = self.verify_url or f"{self.base}/lnurlp/alice/verify/{payment_hash}"
        return body


class _Handler(BaseHTTPRequestHandler):
    server: Any

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client under test gave up first, as it should for a slow server

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        lnurl: LnurlServer = self.server.lnurl
        url = urlsplit(self.path)
        mode = lnurl.mode
        if mode == "slow":
            time.sleep(3)
        if mode == "html":
            return self._send(200, b"<html><body>Welcome!</body></html>", "text/html")
        if mode == "server_error":
            return self._send(500, b'{"error": "boom"}')
        if mode == "huge":
            return self._send(200, b'{"x": "' + b"a" * 200_000 + b'"}')
        if mode == "redirect_elsewhere":
            self.send_response(302)
            self.send_header("Location", "https://attacker.example/.well-known/lnurlp/alice")
            self.end_headers()
            return None
        if url.path == "/.well-known/lnurlp/moved":
            self.send_response(301)
            self.send_header("Location", "/.well-known/lnurlp/alice")
            self.end_headers()
            return None
        if url.path == "/.well-known/lnurlp/alice":
            return self._send(200, json.dumps(lnurl.pay_request()).encode())
        if url.path == "/lnurlp/alice/callback":
            query = parse_qs(url.query)
            if query.get("session") != ["abc"]:
                return self._send(400, b'{"status": "ERROR", "reason": "lost the session"}')
            amount = int(query["amount"][0])
            lnurl.callbacks.append(amount)
            if mode == "error_status":
                return self._send(200, b'{"status": "ERROR", "reason": "amount too small"}')
            return self._send(200, json.dumps(lnurl.invoice_for(amount)).encode())
        return self._send(404, b'{"status": "ERROR", "reason": "unknown user"}')


@pytest.fixture
def lnurl_server(settings) -> Iterator[LnurlServer]:
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    settings.LNURL_TIMEOUT_SECONDS = 1
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    lnurl = LnurlServer(port=httpd.server_address[1])
    httpd.lnurl = lnurl  # type: ignore[attr-defined]
    serve_in_background(httpd)
    try:
        yield lnurl
    finally:
        httpd.shutdown()
        httpd.server_close()

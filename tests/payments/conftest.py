from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.ownservers import serve_in_background


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"{}"
    content_type: str = "application/json; charset=utf-8"
    delay: float = 0.0


@dataclass
class FakeProviderServer:
    """A real HTTP server on 127.0.0.1 that answers like a rate provider would."""

    url: str
    replies: dict[str, Reply] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def answer(self, path: str, payload=None, *, status=200, body=None, content_type=None, delay=0.0) -> None:
        raw = body if body is not None else json.dumps(payload).encode()
        self.replies[path] = Reply(status, raw, content_type or "application/json; charset=utf-8", delay)


def _start(server_state_holder: list) -> tuple[ThreadingHTTPServer, FakeProviderServer]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            state: FakeProviderServer = server_state_holder[0]
            path = self.path.split("?", 1)[0]
            state.requests.append(self.path)
            # A reply for the exact path and query wins over one for the path alone.
            reply = state.replies.get(self.path) or state.replies.get(path)
            reply = reply or Reply(404, b"<html>not found</html>", "text/html")
            if reply.delay:
                time.sleep(reply.delay)
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state = FakeProviderServer(url=f"http://127.0.0.1:{httpd.server_address[1]}")
    server_state_holder.append(state)
    serve_in_background(httpd)
    return httpd, state


@pytest.fixture
def provider_server() -> Iterator[FakeProviderServer]:
    holder: list = []
    httpd, state = _start(holder)
    yield state
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def second_provider_server() -> Iterator[FakeProviderServer]:
    holder: list = []
    httpd, state = _start(holder)
    yield state
    httpd.shutdown()
    httpd.server_close()


def coingecko_payload(now: int, **prices) -> dict:
    """CoinGecko /api/v3/simple/price?vs_currencies=usd&include_last_updated_at=true."""
    defaults = {
        "bitcoin": 67187.3358,
        "ethereum": 3452.12,
        "solana": 172.45,
        "usd-coin": 0.999875,
        "tether": 1.0003,
        "euro-coin": 1.0812,
    }
    defaults.update(prices)
    return {coin: {"usd": price, "last_updated_at": now} for coin, price in defaults.items()}


def open_er_api_payload(now: int, rates: dict | None = None) -> dict:
    """open.er-api.com /v6/latest/USD (ExchangeRate-API open access format)."""
    from payments.rates import FIAT_CURRENCIES

    table = {code: 2.5 for code in FIAT_CURRENCIES}
    table.update({"USD": 1, "EUR": 0.9205, "SEK": 10.4821, "JPY": 151.37, "FOK": 6.87, "GGP": 0.79})
    table.update(rates or {})
    return {
        "result": "success",
        "provider": "https://www.exchangerate-api.com",
        "documentation": "https://www.exchangerate-api.com/docs/free",
        "terms_of_use": "https://www.exchangerate-api.com/terms",
        "time_last_update_unix": now - 3600,
        "time_last_update_utc": "Sun, 22 Nov 2026 00:02:31 +0000",
        "time_next_update_unix": now + 80000,
        "time_next_update_utc": "Mon, 23 Nov 2026 00:32:41 +0000",
        "time_eol_unix": 0,
        "base_code": "USD",
        "rates": table,
    }

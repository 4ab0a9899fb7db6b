"""HTTP and JSON-RPC plumbing shared by the chain clients: timeouts, a request budget
(rate limit), request counting for the benchmark, and Decimal-exact JSON parsing."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Collection
from decimal import Decimal
from typing import Any

import requests
from django.conf import settings


class ChainError(Exception):
    """A node or provider answered with an error, or not at all."""


class RateLimiter:
    """At most `per_second` requests per second from this process (0: unlimited)."""

    def __init__(self, per_second: int) -> None:
        self.interval = 1.0 / per_second if per_second else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            delay = self._next - now
            self._next = max(now, self._next) + self.interval
        if delay > 0:
            time.sleep(delay)


class Http:
    """A requests session that counts calls and keeps to a request rate."""

    def __init__(self, base_url: str = "", *, headers: dict[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = requests.Session()
        self.session.headers.update(headers or {})
        self.timeout = settings.CHAINWATCH_HTTP_TIMEOUT_SECONDS
        self.limiter = RateLimiter(settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND)
        self.calls = 0

    def request(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        self.limiter.wait()
        self.calls += 1
        full = url if url.startswith(("http://", "https://")) else f"{self.base_url}{url}"
        try:
            return self.session.request(method, full, timeout=self.timeout, **kwargs)
        except requests.RequestException as exc:
            raise ChainError(f"{method} {_redact(full)} failed: {type(exc).__name__}") from exc

    def get_json(self, url: str, **kwargs: Any) -> Any:
        response = self.request("GET", url, **kwargs)
        if response.status_code >= 400:
            raise ChainError(f"GET {_redact(response.url)} answered {response.status_code}")
        return parse_json(response.text)

    def get_text(self, url: str) -> str:
        response = self.request("GET", url)
        if response.status_code >= 400:
            raise ChainError(f"GET {_redact(response.url)} answered {response.status_code}")
        return response.text


def parse_json(text: str) -> Any:
    """JSON with every non-integer number as Decimal, never float (Bitcoin Core sends BTC values)."""
    return json.loads(text, parse_float=Decimal)


def _redact(url: str) -> str:
    # Endpoints may carry credentials or API keys in the URL; keep them out of errors.
    scheme, sep, rest = url.partition("://")
    if "@" in rest.split("/", 1)[0]:
        rest = rest.split("@", 1)[1]
    return f"{scheme}{sep}{rest.split('?', 1)[0]}"


class JsonRpc:
    """JSON-RPC 2.0 over HTTP, single calls and batches (Bitcoin Core and Solana accept both)."""

    def __init__(self, url: str, *, jsonrpc: str = "2.0") -> None:
        self.http = Http()
        self.url = url
        self.jsonrpc = jsonrpc
        self._id = 0

    @property
    def calls(self) -> int:
        return self.http.calls

    def call(self, method: str, params: list[Any] | None = None) -> Any:
        return self.batch([(method, params or [])])[0]

    def batch(
        self, calls: list[tuple[str, list[Any]]], *, allow_errors: bool = False, optional: Collection[int] = ()
    ) -> list[Any]:
        """Results in call order; with allow_errors an errored call yields None instead of raising,
        and so does an errored call whose position is in `optional` (a tag a node may not know)."""
        results: list[Any] = []
        size = settings.CHAINWATCH_JSONRPC_BATCH_SIZE
        for start in range(0, len(calls), size):
            excused = {i - start for i in optional if start <= i < start + size}
            results += self._batch(calls[start : start + size], allow_errors, excused)
        return results

    def _batch(
        self, calls: list[tuple[str, list[Any]]], allow_errors: bool, excused: Collection[int] = ()
    ) -> list[Any]:
        if not calls:
            return []
        payload = []
        for method, params in calls:
            self._id += 1
            payload.append({"jsonrpc": self.jsonrpc, "id": self._id, "method": method, "params": params})
        body = payload if len(payload) > 1 else payload[0]
        response = self.http.request("POST", self.url, json=body)
        if response.status_code >= 400 and not response.text.strip().startswith(("{", "[")):
            raise ChainError(f"JSON-RPC {_redact(self.url)} answered {response.status_code}")
        answer = parse_json(response.text)
        answers = answer if isinstance(answer, list) else [answer]
        by_id = {item.get("id"): item for item in answers}
        out: list[Any] = []
        for position, request in enumerate(payload):
            item = by_id.get(request["id"])
            if item is None:
                raise ChainError(f"JSON-RPC {request['method']}: no answer")
            if item.get("error"):
                if allow_errors or position in excused:
                    out.append(None)
                    continue
                raise ChainError(f"JSON-RPC {request['method']}: {item['error']}")
            out.append(item.get("result"))
        return out

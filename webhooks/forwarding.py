"""Forward an account's events to a local URL, signed like webhook deliveries (`manage.py listen`).

Local development without webhooks to a developer's machine: the forwarder reads the API key's
events over the API (`GET /api/v1/events/stream`, a long poll), from the newest one at start
on, and POSTs each, in order, to the `--forward-to` URL with the headers of a delivery
(X-Service-Signature and the Standard Webhooks ones), keyed with a forwarding secret it prints.
The delivery id of a forwarded event is the event id. It runs where the developer runs it and
calls the URL they give it, so the outbound guard for user-supplied webhook URLs does not apply.
docs/examples/listen.py does the same with the Python standard library alone.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from webhooks import signing

POLL_WAIT_SECONDS = 25
FORWARD_TIMEOUT_SECONDS = 15  # as a webhook delivery's
RETRY_PAUSE_SECONDS = 2.0


class ApiRefused(Exception):
    """The API refused the key (401, 403) or the query (4xx): retrying would not help."""


@dataclass
class Forwarded:
    event: dict[str, Any]
    status: int | None  # None: no answer (refused connection, time-out)
    error: str
    duration_ms: int


def event_body(item: dict[str, Any]) -> bytes:
    """The body a webhook delivery of this event carries (signing.body_encode), from the API's item."""
    return signing.body_encode(
        item["event"],
        item["data"],
        event_id=item["id"],
        created_at=datetime.fromisoformat(item["createdAt"]),
        sequence=item["sequence"],
        object_id=item["objectId"],
    )


class Forwarder:
    def __init__(
        self,
        *,
        api_url: str,
        api_key: str,
        forward_to: str,
        secret: str,
        types: list[str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        for url in (api_url, forward_to):
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"not an http(s) URL: {url!r}")
        self.api_url, self.api_key, self.forward_to = api_url.rstrip("/"), api_key, forward_to
        self.secret, self.types, self.sleep = secret, types or [], sleep

    def _get(self, path: str, query: dict[str, Any], timeout: float) -> dict[str, Any]:
        url = f"{self.api_url}{path}?{urllib.parse.urlencode(query)}"
        headers = {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json"}
        request = urllib.request.Request(url, headers=headers)  # noqa: S310 (http(s) only: __init__)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (the service's URL)
                answer: dict[str, Any] = json.loads(response.read())
                return answer
        except urllib.error.HTTPError as exc:
            if 400 <= exc.code < 500 and exc.code not in (408, 429):
                try:
                    detail = json.loads(exc.read()).get("detail", "")
                except ValueError:
                    detail = ""
                raise ApiRefused(f"{exc.code} from {path}: {detail}") from exc
            raise

    def newest(self) -> str | None:
        """The id of the key's newest event: forwarding starts after it."""
        items = self._get("/api/v1/events", {"pageSize": 1}, timeout=30)["items"]
        return items[0]["id"] if items else None

    def events(self, cursor: str | None) -> Iterator[dict[str, Any]]:
        """The key's events after `cursor`, oldest first, for as long as it is iterated. A
        failing call (the service restarting, the network) is tried again after a pause."""
        while True:
            query: dict[str, Any] = {"wait": POLL_WAIT_SECONDS}
            if cursor is not None:
                query["startingAfter"] = cursor
            if self.types:
                query["type"] = ",".join(self.types)
            started = time.monotonic()
            try:
                page = self._get("/api/v1/events/stream", query, timeout=POLL_WAIT_SECONDS + 30)
            except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError):
                self.sleep(RETRY_PAUSE_SECONDS)
                continue
            yield from page["items"]
            cursor = page["next"]
            if not page["items"] and time.monotonic() - started < 1:  # the service had no room to wait
                self.sleep(RETRY_PAUSE_SECONDS)

    def forward(self, item: dict[str, Any]) -> Forwarded:
        body = event_body(item)
        headers = signing.delivery_headers(
            secret=self.secret, delivery_id=item["id"], event_type=item["event"], timestamp=int(time.time()), body=body
        )
        request = urllib.request.Request(self.forward_to, data=body, headers=headers, method="POST")  # noqa: S310
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=FORWARD_TIMEOUT_SECONDS) as response:  # noqa: S310
                status, error = response.status, ""
        except urllib.error.HTTPError as exc:
            status, error = exc.code, ""
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            status, error = None, str(getattr(exc, "reason", exc))
        return Forwarded(item, status, error, int((time.monotonic() - started) * 1000))

"""Signatures of a delivery: the spec's X-Service-Signature and the Standard Webhooks headers."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.wire import json_datetime

if TYPE_CHECKING:
    from webhooks.models import Event

SECRET_PREFIX = "whsec_"


def secret_generate() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def body_encode(
    event_type: str,
    data: dict[str, Any],
    *,
    event_id: Any = None,
    created_at: datetime | None = None,
    sequence: int | None = None,
    object_id: Any = None,
) -> bytes:
    """The exact bytes POSTed (and signed). Same event, same bytes, on every attempt. Beside
    the spec's `event` and `data`: the event's `id`, `createdAt`, `objectId` and `sequence`
    (the object's events numbered 1, 2, 3...: a receiver ignores one older than what it has)."""
    body: dict[str, Any] = {}
    if event_id is not None:
        body["id"] = str(event_id)
    body["event"] = event_type
    if event_id is not None:
        body["createdAt"] = json_datetime(created_at)
        body["objectId"] = None if object_id is None else str(object_id)
        body["sequence"] = sequence
    body["data"] = data
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def event_body(event: Event) -> bytes:
    """The body of a delivery (or a forwarded event) of a webhooks.models.Event."""
    return body_encode(
        event.type,
        event.data,
        event_id=event.id,
        created_at=event.created_at,
        sequence=event.sequence,
        object_id=event.object_id,
    )


def service_signature(secret: str, body: bytes) -> str:
    """X-Service-Signature: keyed with the whole secret string, exactly as shown at creation."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def standard_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """webhook-signature: keyed with the bytes after `whsec_`, over `id.timestamp.body`."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def delivery_headers(
    *,
    secret: str,
    delivery_id: str,
    event_type: str,
    timestamp: int,
    body: bytes,
    previous_secret: str | None = None,
) -> dict[str, str]:
    """During a rotation overlap (`previous_secret` set) the delivery carries both signatures:
    X-Service-Signature keeps one value (the current secret's) and X-Service-Signature-Previous
    adds the replaced secret's, so a verifier comparing one header with one expected value
    never sees a list; webhook-signature lists both, space-separated, as Standard Webhooks
    allows (its verifiers accept any one that matches)."""
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "payment-drafts-webhooks/1",
        "X-Service-Event": event_type,
        "X-Service-Delivery": delivery_id,
        "X-Service-Signature": service_signature(secret, body),
        "webhook-id": delivery_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": standard_signature(secret, delivery_id, timestamp, body),
    }
    if previous_secret:
        headers["X-Service-Signature-Previous"] = service_signature(previous_secret, body)
        headers["webhook-signature"] += " " + standard_signature(previous_secret, delivery_id, timestamp, body)
    return headers

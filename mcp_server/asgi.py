"""ASGI entry point of the MCP process: ``uvicorn mcp_server.asgi:application``.

It serves ``/mcp`` and the pay page's long poll ``/pay/{token}/live`` (paylinks/live.py);
``make run`` and docker-compose put it behind the same address
as the WSGI REST server. Lifespan events go to the SDK's app (its session manager needs
them). Refused keys answer the REST API's problem documents: 401 with WWW-Authenticate,
or 429 while the address is guessing keys. A body is read as strictly as REST reads one
(a repeated key is refused, not "last one wins"): a 400 JSON-RPC parse error whose `data` is
the problem document REST would send.
"""

from __future__ import annotations

import json
import os
from types import SimpleNamespace
from typing import Any

import django

from core.env import load_local_env

load_local_env()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.conf import settings  # noqa: E402
from mcp_types import PARSE_ERROR  # noqa: E402
from rest_framework import exceptions  # noqa: E402

from core.api.parsers import MAX_INT_DIGITS, LongInteger, is_json_media_type, parse_json  # noqa: E402
from core.api.throttling import ApiRateThrottle  # noqa: E402
from core.requests import REQUEST_ID_HEADER, request_id_begin  # noqa: E402
from core.runtime import apply_runtime_guards, open_files_raised, start_up_frozen  # noqa: E402
from mcp_server.server import PATH, build_app, problem_of, request_state  # noqa: E402
from paylinks import live  # noqa: E402

PROBLEM = b"application/problem+json"


def _with_request_id(send, request_id: str):
    header = (REQUEST_ID_HEADER.lower().encode(), request_id.encode())

    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), header]}
        await send(message)

    return wrapped


class McpApplication:
    def __init__(self) -> None:
        self.app = build_app()

    async def __call__(self, scope: dict[str, Any], receive, send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        # Every log line of this request carries its id, and the response names it (as REST's do).
        offered = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
        request_id = request_id_begin(offered)
        send = _with_request_id(send, request_id)
        if scope["path"] == "/healthz":  # liveness of this process (the proxy sends it only /mcp)
            body = b'{"status": "ok"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"16")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        if live.LIVE_PATH.match(scope["path"]):  # the pay page's long poll (nginx sends it here)
            await live.application(scope, receive, send)
            return
        if scope["path"] != PATH:
            await self._send_problem(send, problem_of(exceptions.NotFound("No resource at this address.")), [])
            return
        if scope["method"] == "POST":
            receive = await self._read_strictly(scope, receive, send)
            if receive is None:
                return
        state: dict[str, Any] = {"client": client_ident(scope), "request_id": request_id}
        token = request_state.set(state)
        try:
            await self.app(scope, receive, self._refusals(send, state))
        finally:
            request_state.reset(token)

    async def _read_strictly(self, scope: dict[str, Any], receive, send):
        """Read a JSON body as REST does (core.api.parsers: no duplicate keys, no NaN, bounded
        nesting) before the SDK parses it leniently (a repeated key's last value would win).
        Returns the receive callable that gives the body to the SDK, or None once refused."""
        limit = settings.API_MAX_BODY_BYTES
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return _replay(messages, receive)
            size += len(message.get("body", b""))
            if not message.get("more_body"):
                break
            if size > limit:  # the SDK refuses it with a 413
                return _replay(messages, receive)
        headers = dict(scope.get("headers", []))
        body = b"".join(m.get("body", b"") for m in messages)
        if size > limit or not is_json_media_type(headers.get(b"content-type", b"").decode("latin-1")):
            return _replay(messages, receive)
        try:
            too_long = _long_integer_key(parse_json(body.decode("utf-8")))
            if too_long is not None:  # the SDK's parser would refuse it without naming the field
                detail = exceptions.ErrorDetail(
                    f"More than {MAX_INT_DIGITS} digits: beyond any field's range.", "max_value"
                )
                raise exceptions.ValidationError({too_long: [detail]})
        except UnicodeDecodeError:
            return _replay(messages, receive)  # the SDK answers its parse error
        except (exceptions.ParseError, exceptions.ValidationError) as exc:
            document = problem_of(exc)
            error = {"code": PARSE_ERROR, "message": f"Parse error: {document['detail']}", "data": document}
            answer = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())],
                }
            )
            await send({"type": "http.response.body", "body": answer})
            return None
        return _replay(messages, receive)

    def _refusals(self, send, state: dict[str, Any]):
        """Replace the SDK's 401 body with the problem document REST sends for the same refusal."""
        held: dict[str, Any] = {}

        async def wrapped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                held["start"] = message
                return
            if "start" not in held:
                await send(message)
                return
            if message.get("more_body"):
                return
            refused = state.get("refused")
            if refused is not None and refused.throttled:
                document = problem_of(exceptions.Throttled(wait=60, detail=refused.detail))
                await self._send_problem(send, document, [(b"retry-after", b"60")])
                return
            if refused is not None:
                document = problem_of(exceptions.AuthenticationFailed(refused.detail))
            else:
                document = problem_of(exceptions.NotAuthenticated())
            challenge = [(k, v) for k, v in held["start"]["headers"] if k.lower() == b"www-authenticate"]
            await self._send_problem(send, document, challenge)

        return wrapped

    @staticmethod
    async def _send_problem(send, document: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> None:
        body = json.dumps(document).encode()
        await send(
            {
                "type": "http.response.start",
                "status": document["status"],
                "headers": [(b"content-type", PROBLEM), (b"content-length", str(len(body)).encode()), *headers],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _long_integer_key(value: Any, key: str = "") -> str | None:
    """The key holding an integer too long to convert (core.api.parsers.LongInteger), if any."""
    if isinstance(value, LongInteger):
        return key
    items = (
        value.items() if isinstance(value, dict) else ((key, item) for item in value) if isinstance(value, list) else ()
    )
    for name, item in items:
        found = _long_integer_key(item, name)
        if found is not None:
            return found
    return None


def _replay(messages: list[dict[str, Any]], receive):
    """A receive callable giving the messages already read, then the rest from the client."""
    pending = list(messages)

    async def replayed() -> dict[str, Any]:
        return pending.pop(0) if pending else await receive()

    return replayed


def client_ident(scope: dict[str, Any]) -> str:
    """The caller's address by REST's rule (X-Forwarded-For only behind NUM_PROXIES proxies)."""
    client = scope.get("client")
    headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", [])}
    request = SimpleNamespace(META={"REMOTE_ADDR": client[0] if client else ""}, headers=headers)
    return ApiRateThrottle().get_ident(request)


application = McpApplication()
apply_runtime_guards()  # after every import: a sane recursion limit (py_ecc raises it on import)
open_files_raised()  # a long poll holds a connection, a file: up to the hard limit (paylinks/live.py)
start_up_frozen()  # last: what start-up made is out of the collector's way (core.runtime)

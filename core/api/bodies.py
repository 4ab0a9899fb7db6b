"""An operation that takes no request body refuses one (400 `body_not_allowed`) rather than
ignoring it: a client sending `{"reason": ...}` to a cancel learns that nothing read it. An
empty object `{}` holds nothing that could be ignored (many clients send it with every POST),
so it passes.

Which operations take a body is what the OpenAPI document says (the one clients read), built
once per process, and only when a request with a body reaches a path that may take none.
Built under a lock: the schema generator loads its extensions into class attributes, and
two threads of a server building it at once (the first requests after a start) break it.
"""

from __future__ import annotations

import functools
import re
import threading

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
NEVER_A_BODY = ("GET", "HEAD")


_BUILDING = threading.Lock()


def _operations_without_body() -> dict[str, re.Pattern[str]]:
    with _BUILDING:
        return _built()


@functools.cache
def _built() -> dict[str, re.Pattern[str]]:
    """Per method, one pattern matching every path whose operation takes no body."""
    from drf_spectacular.generators import SchemaGenerator

    document = SchemaGenerator(patterns=None).get_schema(request=None, public=True)  # type: ignore[no-untyped-call]  # drf-spectacular leaves both unannotated
    paths: dict[str, list[str]] = {}
    for path, operations in document.get("paths", {}).items():
        pattern = re.escape(path)
        pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", pattern)  # {id} and friends: one path segment
        for method, operation in operations.items():
            if method in HTTP_METHODS and "requestBody" not in operation:
                paths.setdefault(method.upper(), []).append(pattern)
    return {method: re.compile(f"^(?:{'|'.join(patterns)})$") for method, patterns in paths.items()}


def takes_no_body(method: str, path: str) -> bool:
    method = method.upper()
    if method in NEVER_A_BODY:
        return True
    pattern = _operations_without_body().get(method)
    return pattern is not None and pattern.match(path) is not None


def is_empty_body(body: bytes) -> bool:
    """Nothing but whitespace, or an empty JSON object."""
    return body.strip() in (b"", b"{}") or (len(body) < 64 and b"".join(body.split()) == b"{}")

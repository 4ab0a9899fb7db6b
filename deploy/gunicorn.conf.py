"""gunicorn settings read by scripts/run.sh, docker-compose.yml and the Dockerfile (`--config`).

The limits on a request's head sit above nginx's (deploy/nginx.conf.template: a line of at
most 8 KB, headers of at most 8 KB, a head of at most 32 KB), so behind the proxy every
oversize head is refused by nginx with its problem+json page and gunicorn never answers
first. gunicorn's own refusals (a client talking to it directly, as in a test) are
problem+json too: `_problem_error` below takes the place of its HTML error page.
"""

import json
import os
from pathlib import Path

import gunicorn.util

# The longest request line gunicorn allows (its maximum): nginx's 8 KB buffer holds at most
# 8190 bytes and the line's CRLF.
limit_request_line = 8190
# A header line: nginx passes at most 8 KB, and adds the client's address to X-Forwarded-For.
limit_request_field_size = 16384
# More header lines than a 32 KB head can hold (each takes at least 4 bytes).
limit_request_fields = 10000

_PROBLEMS = Path(__file__).resolve().parent / "problems"

if os.environ.get("LOG_FORMAT") == "json":  # gunicorn's own lines as JSON objects too (core/requests.py)
    from core.requests import server_logging

    logconfig_dict = server_logging({"gunicorn.error": "stderr", "gunicorn.access": "stdout"})


def _problem_body(status: int, reason: str) -> bytes:
    """The proxy's own document for this status (deploy/problems), else one built alike."""
    try:
        return (_PROBLEMS / f"{status}.json").read_bytes().strip()
    except OSError:
        document = {
            "type": "about:blank",
            "title": reason,
            "status": status,
            "detail": f"The request was refused: {reason.lower()}.",
            "code": reason.lower().replace(" ", "_"),
            "errors": [],
        }
        return json.dumps(document).encode()


def _problem_error(sock, status_int, reason, mesg):
    """gunicorn.util.write_error as problem+json. `mesg` (the parser's words, which may quote the
    request) is left out, as nginx's pages leave it out."""
    body = _problem_body(int(status_int), reason)
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/problem+json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    gunicorn.util.write_nonblock(sock, head.encode("latin-1") + body)


# The workers call `util.write_error` by its module attribute, at the moment of each refusal.
gunicorn.util.write_error = _problem_error


def child_exit(server, worker):
    """A worker gone: its live gauges leave /metrics (prometheus-client's multiprocess mode)."""
    import os

    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)

"""The outbound GET and POST: no redirect followed, the answer capped, the whole exchange
bounded in time. A real HTTP server on 127.0.0.1 answers."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import outbound
from tests.ownservers import serve_in_background


class _Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.server.seen.append((self.command, self.path, self.headers.get("Host")))  # type: ignore[attr-defined]
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/big":
            body = b"x" * 10_000
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            for _ in range(100):
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.1)
        else:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    do_POST = do_GET  # noqa: N815


@pytest.fixture
def server(settings) -> Iterator[ThreadingHTTPServer]:
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.seen = []  # type: ignore[attr-defined]
    serve_in_background(httpd)
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def url(server: ThreadingHTTPServer, path: str) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


def test_a_get_returns_the_answer(server):
    response = outbound.get(url(server, "/ok"), timeout=2, max_bytes=100)

    assert response.ok and response.body == b"{}" and not response.truncated


def test_a_redirect_is_reported_and_never_followed(server):
    response = outbound.get(url(server, "/redirect"), timeout=2, max_bytes=100)

    assert response.is_redirect
    assert response.location == "http://169.254.169.254/latest/meta-data/"
    assert [path for _, path, _ in server.seen] == ["/redirect"]


def test_an_answer_over_the_cap_is_cut_and_marked_truncated(server):
    response = outbound.get(url(server, "/big"), timeout=2, max_bytes=1000)

    assert len(response.body) == 1000 and response.truncated


def test_a_server_dripping_its_answer_is_cut_off_at_the_time_out(server):
    started = time.monotonic()

    response = outbound.get(url(server, "/drip"), timeout=0.5, max_bytes=1000)

    assert response.status_code is None and response.timed_out
    assert time.monotonic() - started < 2


def test_a_post_sends_the_body_and_the_host_header_of_the_url(server):
    response = outbound.post(url(server, "/hook"), body=b"{}", headers={"X-A": "1"}, timeout=2, max_bytes=10)

    assert response.ok
    assert server.seen == [("POST", "/hook", f"127.0.0.1:{server.server_address[1]}")]


def test_a_refused_url_raises_before_any_connection(server, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = False

    with pytest.raises(outbound.UrlNotAllowed):
        outbound.get(url(server, "/ok"), timeout=2, max_bytes=10)
    assert server.seen == []


def test_a_refused_connection_is_reported_as_refused_not_as_a_time_out(settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    response = outbound.post(f"http://127.0.0.1:{port}/hook", body=b"{}", timeout=15, max_bytes=10)

    assert response.status_code is None and not response.timed_out
    assert response.error == "Connection refused."

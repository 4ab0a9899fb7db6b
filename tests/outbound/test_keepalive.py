"""Kept-alive connections: the next request to the same host goes over the connection the
last one used, pinned to the address that was checked, with no second DNS lookup; once the
pin expires the host is resolved and checked again, and a private answer is refused. Real
servers on 127.0.0.1 answer; the only stand-in is DNS."""

from __future__ import annotations

import ipaddress
import socket
import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import outbound
from outbound import keepalive, transport
from tests.ownservers import serve_in_background


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.peers.append(self.client_address[1])  # type: ignore[attr-defined]
        body = b"x" * 5000 if self.path == "/big" else b"ok"
        self.send_response(200)
        if self.path == "/close":
            self.send_header("Connection", "close")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server(settings, fake_dns) -> Iterator[ThreadingHTTPServer]:
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    fake_dns.answers["localhost"] = ["127.0.0.1"]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.peers = []  # type: ignore[attr-defined]
    serve_in_background(httpd)
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def post(server: ThreadingHTTPServer, path: str = "/hook", **kwargs) -> outbound.Response:
    url = f"http://localhost:{server.server_address[1]}{path}"
    return outbound.post(url, body=b"{}", timeout=2, max_bytes=kwargs.get("max_bytes", 100))


def test_the_next_request_to_the_host_reuses_the_connection_without_a_dns_lookup(server, fake_dns):
    assert post(server).ok and post(server).ok and post(server).ok

    assert len(set(server.peers)) == 1  # one connection, three requests
    assert fake_dns.calls == ["localhost"]


def test_while_pinned_the_connection_still_goes_to_the_checked_address(server, fake_dns):
    post(server)
    fake_dns.answers["localhost"] = ["10.0.0.5"]  # the name now points inside the network

    response = post(server)  # pytest-socket would fail this test on any connection to 10.0.0.5

    assert response.ok and len(set(server.peers)) == 1
    assert fake_dns.calls == ["localhost"]


def test_once_the_pin_expires_the_host_is_checked_again_and_a_private_answer_is_refused(server, fake_dns, monkeypatch):
    post(server)
    fake_dns.answers["localhost"] = ["10.0.0.5"]
    monkeypatch.setattr(keepalive, "PIN_SECONDS", 0.0)  # as if the pin's 30 s had passed

    with pytest.raises(outbound.UrlNotAllowed, match="loopback"):
        post(server)
    assert len(server.peers) == 1
    assert fake_dns.calls == ["localhost", "localhost"]


@pytest.mark.parametrize("path", ["/close", "/big"])
def test_a_connection_the_server_closes_or_whose_answer_was_cut_is_not_reused(server, path):
    assert post(server, path, max_bytes=1000).status_code == 200

    post(server)

    assert len(set(server.peers)) == 2


def test_another_host_on_the_same_address_gets_its_own_connection(server, fake_dns):
    fake_dns.answers["localhost"] = ["127.0.0.1"]
    post(server)

    outbound.post(f"http://127.0.0.1:{server.server_address[1]}/hook", body=b"{}", timeout=2, max_bytes=10)

    assert len(set(server.peers)) == 2


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))[15:])
    while len(body) < length:
        body += conn.recv(65536)


def test_a_kept_connection_the_server_drops_as_the_request_goes_out_is_replaced_once(settings, fake_dns):
    """The server answers the first request of each connection and drops the connection
    when a second one arrives on it, as a server closing an idle connection at that moment."""
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    fake_dns.answers["localhost"] = ["127.0.0.1"]
    listener = socket.create_server(("127.0.0.1", 0))
    connections: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            connections.append(1)
            _read_request(conn)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            _read_request(conn)  # the next request on this connection: dropped unanswered
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()  # with SO_LINGER 0: a reset

    threading.Thread(target=serve, daemon=True).start()
    url = f"http://localhost:{listener.getsockname()[1]}/hook"
    try:
        first = outbound.post(url, body=b"{}", timeout=2, max_bytes=10)
        second = outbound.post(url, body=b"{}", timeout=2, max_bytes=10)
    finally:
        listener.close()

    assert first.ok and second.ok
    assert len(connections) == 2


def test_a_connection_whose_peer_is_not_the_checked_address_is_refused():
    listener = socket.create_server(("127.0.0.1", 0))
    connection = transport._connection(
        outbound.Target("http", "localhost", listener.getsockname()[1], "/", ipaddress.ip_address("127.0.0.1")),
        timeout=2,
        ca_bundle="",
    )
    connection.connect()
    try:
        transport._peer_check(connection, ipaddress.ip_address("127.0.0.1"))  # the checked one: fine
        with pytest.raises(outbound.UrlNotAllowed):
            transport._peer_check(connection, ipaddress.ip_address("127.0.0.2"))
    finally:
        connection.close()
        listener.close()

"""The proxy in front of gunicorn: docker-compose wiring (checked statically: no Docker engine
runs here), and deploy/nginx.conf.template rendered as compose renders it (TLS) and run with
the local nginx in front of a one-worker gunicorn."""

import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "nginx.conf.template"
PROBLEMS = ROOT / "deploy" / "problems"


def test_compose_publishes_only_the_proxy_in_front_of_gunicorn():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    proxy, web, mcp = services["proxy"], services["web"], services["mcp"]
    assert proxy["image"].startswith("nginx:")  # the official image
    assert proxy["ports"] == ["443:443"]
    assert [name for name, service in services.items() if service.get("ports")] == ["proxy"]
    assert web["expose"] == ["8000"] and "0.0.0.0:8000" in web["command"]
    assert mcp["expose"] == ["8001"] and "8001" in mcp["command"]
    assert proxy["depends_on"] == {"web": {"condition": "service_healthy"}, "mcp": {"condition": "service_started"}}
    mounts = dict(volume.split(":")[:2] for volume in proxy["volumes"])
    assert mounts == {
        "./deploy/nginx.conf.template": "/etc/nginx/templates/nginx.conf.template",
        "./deploy/problems": "/etc/nginx/problems",
    }
    environment = proxy["environment"]
    assert environment["NGINX_ENVSUBST_OUTPUT_DIR"] == "/etc/nginx"  # the image renders templates there
    assert environment["WEB_UPSTREAM"] == "web:8000" and environment["MCP_UPSTREAM"] == "mcp:8001"
    assert environment["LISTEN"] == "443 ssl" and "/run/secrets/tls_certificate" in environment["NGINX_TLS"]
    placeholders = set(re.findall(r"\$\{([A-Z_]+)\}", TEMPLATE.read_text()))
    assert placeholders <= set(environment), placeholders - set(environment)
    assert set(proxy["secrets"]) == {"tls_certificate", "tls_private_key"} <= set(compose["secrets"])
    assert web["environment"]["TRUST_X_FORWARDED_PROTO"] == "true"
    assert web["environment"]["NUM_PROXIES"] == "1"
    template = TEMPLATE.read_text()
    for directive in ("client_header_timeout 15s", "client_body_timeout 15s", "proxy_max_temp_file_size 0"):
        assert directive + ";" in template


def test_every_error_page_of_the_proxy_is_a_problem_document():
    pages = re.findall(r"error_page ([\d =]+) /_proxy_errors/(\d+)\.json;", TEMPLATE.read_text())
    assert len(pages) >= 8
    for codes, page in pages:
        document = json.loads((PROBLEMS / f"{page}.json").read_text())
        assert document["status"] == int(page) and document["code"] and document["detail"]
        assert set(document) == {"type", "title", "status", "detail", "code", "errors"}
        assert page in codes.split() or f"={page}" in codes.split()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listens on {port}")


def https_request(port: int, raw: bytes, *, timeout: float = 10) -> tuple[int, dict, bytes]:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as plain:
        with context.wrap_socket(plain, server_hostname="localhost") as sock:
            sock.sendall(raw)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if headers.get("transfer-encoding") == "chunked":
        decoded, rest = b"", body
        while rest:
            size, _, rest = rest.partition(b"\r\n")
            size = int(size, 16)
            if not size:
                break
            decoded, rest = decoded + rest[:size], rest[size + 2 :]
        body = decoded
    return int(lines[0].split()[1]), headers, body


def get(path: str, **headers: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: localhost", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@pytest.fixture
def proxied_gunicorn(tmp_path):
    if not shutil.which("nginx"):
        pytest.skip("nginx is not installed")
    app_port, https_port = free_port(), free_port()
    # /livez asks no dependency: the server's maintenance database will do.
    database = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/postgres"
    env = dict(os.environ) | {"DJANGO_SETTINGS_MODULE": "tests.settings", "ENV_FILE": "", "DATABASE_URL": database}
    gunicorn = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/gunicorn"),
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{app_port}",
            "--workers",
            "1",
            "--timeout",
            "60",
        ],  # fmt: skip
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-days",
            "1",
            "-keyout",
            str(tmp_path / "key.pem"),
            "-out",
            str(tmp_path / "cert.pem"),
        ],  # fmt: skip
        check=True,
        capture_output=True,
    )
    mcp_port = free_port()  # nothing listens there: only / is exercised here
    render = {
        "NGINX_PREFIX": str(tmp_path),
        "NGINX_WORKERS": "1",
        "LISTEN": f"127.0.0.1:{https_port} ssl",
        "NGINX_TLS": f"ssl_certificate {tmp_path}/cert.pem; ssl_certificate_key {tmp_path}/key.pem; "
        "ssl_protocols TLSv1.2 TLSv1.3;",
        "NGINX_PROBLEMS": str(PROBLEMS),
        "WEB_UPSTREAM": f"127.0.0.1:{app_port}",
        "MCP_UPSTREAM": f"127.0.0.1:{mcp_port}",
    }
    conf = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "render_template.py"), str(TEMPLATE)],
        env=dict(os.environ) | render,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (tmp_path / "nginx.conf").write_text(conf)
    nginx = subprocess.Popen(
        ["nginx", "-e", "stderr", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_for_port(app_port)
        wait_for_port(https_port)
        yield {"app": app_port, "https": https_port, "gunicorn": gunicorn}
    finally:
        for process in (nginx, gunicorn):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)


@pytest.mark.slow
def test_the_proxy_shields_gunicorn_from_slow_clients_and_answers_its_own_errors_as_problems(proxied_gunicorn):
    ports = proxied_gunicorn
    deadline = time.monotonic() + 60  # the worker is up once it has answered once
    while https_request(ports["https"], get("/livez"))[0] != 200 and time.monotonic() < deadline:
        time.sleep(0.5)
    # Two clients trickle their headers over TLS and never finish.
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    tricklers = []
    for _ in range(2):
        sock = context.wrap_socket(socket.create_connection(("127.0.0.1", ports["https"])), server_hostname="localhost")
        sock.sendall(b"GET /livez HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        tricklers.append(sock)
    # The one gunicorn worker still answers at once through the proxy.
    started = time.monotonic()
    status, headers, body = https_request(ports["https"], get("/livez", **{"X-Request-Id": "proxied-1"}))
    assert status == 200 and time.monotonic() - started < 5, body
    assert headers["x-request-id"] == "proxied-1"
    # Whereas a trickling client talking to gunicorn directly holds its only worker.
    direct = socket.create_connection(("127.0.0.1", ports["app"]))
    direct.sendall(b"GET /livez HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
    time.sleep(0.5)
    with socket.create_connection(("127.0.0.1", ports["app"]), timeout=3) as other:
        other.sendall(get("/livez"))
        with pytest.raises(TimeoutError):
            other.recv(100)
    direct.close()
    for sock in tricklers:
        sock.close()

    def problem(raw: bytes) -> tuple[int, dict]:
        status, headers, body = https_request(ports["https"], raw)
        assert headers["content-type"] == "application/problem+json", (status, headers, body[:200])
        return status, json.loads(body)

    status, document = problem(get("/livez", **{"X-Big": "x" * 20000}))
    assert status == 431 and document["status"] == 431 and document["code"] == "headers_too_large"
    raw = b"POST /api/v1/drafts HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\nConnection: close\r\n\r\n"
    status, document = problem(raw)
    assert status == 400 and document["code"] == "bad_request"
    # A flood-sized body is refused from its Content-Length alone (the apps refuse smaller ones).
    raw = b"POST /api/v1/drafts HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    raw += b"Content-Length: 2000000\r\nConnection: close\r\n\r\n"
    status, document = problem(raw)
    assert status == 413 and document["status"] == 413
    # The service's own problems pass through untouched.
    status, headers, body = https_request(ports["https"], get("/api/v1/drafts"))
    assert status == 401 and json.loads(body)["code"] == "not_authenticated"
    # gunicorn gone: the proxy answers 503 as a problem.
    os.killpg(ports["gunicorn"].pid, signal.SIGTERM)
    ports["gunicorn"].wait(timeout=30)
    status, document = problem(get("/livez"))
    assert status == 503 and document["code"] == "service_unavailable"

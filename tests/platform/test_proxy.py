"""The proxy in front of gunicorn: its error pages as problem documents (checked statically),
and deploy/nginx.conf.template rendered as compose renders it (TLS) and run with the local
nginx in front of a one-worker gunicorn."""

import json
import os
import re
import resource
import selectors
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "nginx.conf.template"
PROBLEMS = ROOT / "deploy" / "problems"
DEFAULTS = ROOT / "deploy" / "nginx.env"


def proxy_defaults() -> dict[str, str]:
    lines = [line for line in DEFAULTS.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def test_every_error_page_of_the_proxy_is_a_problem_document():
    pages = re.findall(r"error_page ([\d =]+) /_proxy_errors/(\d+)\.json;", TEMPLATE.read_text())
    assert len(pages) >= 8
    for codes, page in pages:
        document = json.loads((PROBLEMS / f"{page}.json").read_text())
        assert document["status"] == int(page) and document["code"] and document["detail"]
        assert set(document) == {"type", "title", "status", "detail", "code", "errors"}
        assert page in codes.split() or f"={page}" in codes.split()
    assert {page for _, page in pages} == {path.stem for path in PROBLEMS.glob("*.json")}


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


def read_response(sock: socket.socket) -> tuple[int, dict, bytes]:
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


def https_request(port: int, raw: bytes, *, timeout: float = 10) -> tuple[int, dict, bytes]:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as plain:
        with context.wrap_socket(plain, server_hostname="localhost") as sock:
            sock.sendall(raw)
            return read_response(sock)


def http_request(port: int, raw: bytes, *, source: str = "127.0.0.1", timeout: float = 10) -> tuple[int, dict, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0)) as sock:
        sock.sendall(raw)
        return read_response(sock)


def get(path: str, **headers: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: localhost", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def start_gunicorn(port: int) -> subprocess.Popen:
    # /livez asks no dependency: the server's maintenance database will do.
    database = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/postgres"
    env = dict(os.environ) | {"DJANGO_SETTINGS_MODULE": "tests.settings", "ENV_FILE": "", "DATABASE_URL": database}
    return subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "config.wsgi:application", "--config", "deploy/gunicorn.conf.py"]
        + ["--bind", f"127.0.0.1:{port}"]
        + ["--workers", "1", "--timeout", "60"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@pytest.fixture(scope="module")
def served_problems():
    """deploy/problems where nginx's workers read them, as compose mounts them at /etc/nginx/problems.
    Started by root (as in CI), nginx runs its workers as an unprivileged user, which cannot pass
    a private directory the checkout may sit in (mktemp -d): every error page would be a 403."""
    served = Path(tempfile.mkdtemp(prefix="proxy-problems-", dir="/tmp"))  # any user passes /tmp
    served.chmod(0o755)
    for document in PROBLEMS.glob("*.json"):
        shutil.copyfile(document, served / document.name)
        (served / document.name).chmod(0o644)
    yield served
    shutil.rmtree(served)


def start_nginx(prefix: Path, problems: Path, **render: str) -> subprocess.Popen:
    """nginx from the project's template and defaults (deploy/nginx.env), ``render`` winning."""
    conf = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "render_template.py"), "--defaults", str(DEFAULTS), str(TEMPLATE)],
        env=dict(os.environ) | {"NGINX_PREFIX": str(prefix), "NGINX_PROBLEMS": str(problems)} | render,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (prefix / "nginx.conf").write_text(conf)
    with open(prefix / "stderr.log", "wb") as log:  # a file: a full pipe would stall nginx
        return subprocess.Popen(
            ["nginx", "-e", "stderr", "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )


def stop(*processes: subprocess.Popen) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)


@pytest.fixture
def proxied_gunicorn(tmp_path, served_problems):
    if not shutil.which("nginx"):
        pytest.skip("nginx is not installed")
    app_port, https_port = free_port(), free_port()
    gunicorn = start_gunicorn(app_port)
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
    nginx = start_nginx(
        tmp_path,
        served_problems,
        NGINX_WORKERS="1",
        LISTEN=f"127.0.0.1:{https_port} ssl",
        NGINX_TLS=f"ssl_certificate {tmp_path}/cert.pem; ssl_certificate_key {tmp_path}/key.pem; "
        "ssl_protocols TLSv1.2 TLSv1.3;",
        WEB_UPSTREAM=f"127.0.0.1:{app_port}",
        MCP_UPSTREAM=f"127.0.0.1:{free_port()}",  # nothing listens there: only / is exercised here
    )
    try:
        wait_for_port(app_port)
        wait_for_port(https_port)
        yield {"app": app_port, "https": https_port, "gunicorn": gunicorn}
    finally:
        stop(nginx, gunicorn)


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
    # Plain HTTP sent to the TLS port.
    status, headers, body = http_request(ports["https"], get("/healthz"))
    assert status == 400 and headers["content-type"] == "application/problem+json"
    assert json.loads(body)["code"] == "bad_request"
    # The service's own problems pass through untouched.
    status, headers, body = https_request(ports["https"], get("/api/v1/drafts"))
    assert status == 401 and json.loads(body)["code"] == "not_authenticated"
    # gunicorn gone: the proxy answers 503 as a problem.
    os.killpg(ports["gunicorn"].pid, signal.SIGTERM)
    ports["gunicorn"].wait(timeout=30)
    status, document = problem(get("/livez"))
    assert status == 503 and document["code"] == "service_unavailable"


@pytest.fixture
def plain_proxy(tmp_path, served_problems):
    """Start a one-worker gunicorn and nginx in front on plain HTTP, as `make run` does; keyword
    arguments override deploy/nginx.env."""
    if not shutil.which("nginx"):
        pytest.skip("nginx is not installed")
    started = []

    def start(**overrides: str) -> dict:
        app_port, port = free_port(), free_port()
        prefix = tmp_path / f"nginx-{port}"
        prefix.mkdir()
        started.append(start_gunicorn(app_port))
        started.append(
            start_nginx(
                prefix,
                served_problems,
                NGINX_WORKERS="1",
                LISTEN=f"127.0.0.1:{port}",
                NGINX_TLS="",
                WEB_UPSTREAM=f"127.0.0.1:{app_port}",
                MCP_UPSTREAM=f"127.0.0.1:{free_port()}",
                **overrides,
            )
        )
        wait_for_port(port)
        deadline = time.monotonic() + 60  # straight to gunicorn: no request spent at the proxy
        while time.monotonic() < deadline:
            try:
                if http_request(app_port, get("/livez"), timeout=5)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.3)
        return {"port": port, "app": app_port, "gunicorn": started[-2]}

    yield start
    stop(*reversed(started))


def seconds(value: str) -> int:
    return int(value.removesuffix("s"))


class SlowClients:
    """Clients from one address that hold connections: most send a whole request head announcing
    1,000 bytes of body, send three and stop; one in ten sends part of a head and stops. Each
    one the server closes is replaced at once while ``refill`` holds, as an attacker would."""

    HEAD = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: "
    BODY = b"POST /api/v1/drafts HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    BODY += b'Content-Length: 1000\r\n\r\n{"a'

    def __init__(self, port: int, source: str) -> None:
        self.port, self.source = port, source
        self.selector = selectors.DefaultSelector()
        self.opened = 0
        self.refused: list[str] = []
        self.finished: list[tuple[bytes, bytes]] = []  # (what was sent, what came back) per closed one
        self.refill = True

    def open(self) -> None:
        sent = self.HEAD if self.opened % 10 == 0 else self.BODY
        self.opened += 1
        sock = socket.socket()
        sock.bind((self.source, 0))
        sock.settimeout(5)  # a SYN is sent again after 1 s, and 3 s
        try:
            sock.connect(("127.0.0.1", self.port))
            sock.sendall(sent)
        except OSError as exc:
            self.refused.append(repr(exc))
            sock.close()
            return
        sock.setblocking(False)
        self.selector.register(sock, selectors.EVENT_READ, data=[sent, b""])

    def waiting(self) -> list[list]:
        """[sent, received] of the connections still open."""
        return [key.data for key in self.selector.get_map().values()]

    def run(self, until: float) -> None:
        while self.selector.get_map() and time.monotonic() < until:
            for key, _ in self.selector.select(timeout=0.1):
                try:
                    chunk = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                except ConnectionResetError:
                    chunk = b""
                if chunk:
                    key.data[1] += chunk
                    continue
                self.selector.unregister(key.fileobj)
                key.fileobj.close()
                self.finished.append(tuple(key.data))
                if self.refill:
                    self.open()

    def close(self) -> None:
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()


SLOW_CLIENTS = 1100


@pytest.mark.slow
def test_eleven_hundred_slow_clients_from_one_address_leave_health_probes_from_another_answered(plain_proxy):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < SLOW_CLIENTS + 300:
        if hard != resource.RLIM_INFINITY and hard < SLOW_CLIENTS + 300:
            pytest.skip(f"open files are limited to {hard} (ulimit -Hn)")
        resource.setrlimit(resource.RLIMIT_NOFILE, (SLOW_CLIENTS + 300, hard))
    try:
        port = plain_proxy()["port"]
        defaults = proxy_defaults()
        slowest = max(seconds(defaults["NGINX_HEADER_TIMEOUT"]), seconds(defaults["NGINX_BODY_TIMEOUT"]))
        probes: list[tuple[float, int | str]] = []
        flooding = threading.Event()

        def probe() -> None:  # /livez from 127.0.0.1, ten times a second, until the flood is over
            while not flooding.is_set():
                started = time.monotonic()
                try:
                    status = http_request(port, get("/livez"), timeout=1)[0]
                except OSError as exc:
                    status = repr(exc)
                probes.append((time.monotonic() - started, status))
                time.sleep(0.1)

        clients = SlowClients(port, "127.0.0.2")
        prober = threading.Thread(target=probe)
        prober.start()
        time.sleep(0.3)
        try:
            for _ in range(SLOW_CLIENTS):
                clients.open()
            clients.run(until=time.monotonic() + 1)
            # Of the slow bodies, at most NGINX_CONNECTIONS_PER_ADDRESS are waited for at once.
            held = [sent for sent, received in clients.waiting() if sent == SlowClients.BODY and not received]
            clients.run(until=time.monotonic() + 7)  # 1,100 held open for 8 s
            clients.refill = False
            clients.run(until=time.monotonic() + slowest + 3)
            still_open = clients.waiting()
        finally:
            flooding.set()
            prober.join(timeout=30)
            clients.close()

        # Every probe from the other address was answered, each in under a second.
        late = [(round(took, 2), status) for took, status in probes if status != 200 or took >= 1]
        assert not late, f"{len(late)} of {len(probes)} health probes failed or were slow: {late[:10]}"
        assert len(probes) >= 40
        assert len(held) <= int(defaults["NGINX_CONNECTIONS_PER_ADDRESS"])
        # nginx took every slow connection and closed each one within its time-out.
        assert not clients.refused, clients.refused[:5]
        assert not still_open, f"{len(still_open)} slow connections still open"
        # A slow head, or a held body, gets no answer (nothing would read it); other bodies got a
        # 429 problem with Retry-After.
        assert not any(received for sent, received in clients.finished if sent == SlowClients.HEAD)
        refused = [received for sent, received in clients.finished if received]
        assert len(refused) >= SLOW_CLIENTS * 0.9 - int(defaults["NGINX_CONNECTIONS_PER_ADDRESS"])
        for received in refused:
            head, _, body = received.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 429 "), head
            assert b"\r\nContent-Type: application/problem+json\r\n" in head + b"\r\n", head
            assert b"\r\nRetry-After: 1\r\n" in head + b"\r\n", head
            assert json.loads(body)["code"] == "rate_limited" and len(body) < 512
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def problem_answer(answer: tuple[int, dict, bytes], status: int) -> dict:
    """The answer is a small problem+json document of that status."""
    got, headers, body = answer
    assert (got, headers["content-type"]) == (status, "application/problem+json"), (got, headers, body[:200])
    assert int(headers["content-length"]) == len(body) < 512
    document = json.loads(body)
    assert document["status"] == status and document["code"] and document["detail"]
    return document


@pytest.mark.slow
def test_every_error_the_proxy_answers_itself_is_a_small_problem_document(plain_proxy):
    proxy = plain_proxy()
    port = proxy["port"]

    def raw(request: str) -> tuple[int, dict, bytes]:
        return http_request(port, request.replace("\n", "\r\n").encode())

    assert problem_answer(raw("GET /healthz HTTP/1.1\nConnection: close\n\n"), 400)["code"] == "bad_request"
    assert problem_answer(http_request(port, get("/_proxy_errors/400.json")), 404)["code"] == "not_found"
    assert problem_answer(raw("TRACE /healthz HTTP/1.1\nHost: localhost\nConnection: close\n\n"), 405)
    long_uri = "/healthz?" + "a" * 20000
    assert problem_answer(http_request(port, get(long_uri)), 414)["code"] == "uri_too_long"
    assert problem_answer(http_request(port, get("/healthz", **{"X-Big": "x" * 20000})), 431)
    unknown_coding = "POST /api/v1/drafts HTTP/1.1\nHost: localhost\nTransfer-Encoding: gzip\nConnection: close\n\n"
    assert problem_answer(raw(unknown_coding), 501)["code"] == "not_implemented"
    assert problem_answer(raw("GET /healthz HTTP/2.0\nHost: localhost\nConnection: close\n\n"), 505)
    # A chunked body is held to the same size cap as one with a Content-Length.
    big_chunk = "POST /api/v1/drafts HTTP/1.1\nHost: localhost\nTransfer-Encoding: chunked\nConnection: close\n\n"
    assert problem_answer(raw(big_chunk + "200000\n{"), 413)["code"] == "payload_too_large"

    # A chunked body within the cap reaches the app whole, with its length (the app itself
    # refuses a body without one): its fields are checked as any other body's.
    body = b'{"unknownField": 1}'
    chunked = b"POST /api/v1/demo/drafts HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    chunked += b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    status, headers, answer = http_request(port, chunked)
    assert status == 400, answer
    assert "unknownField" in [error["field"] for error in json.loads(answer)["errors"]]
    status, _, answer = http_request(proxy["app"], chunked)
    assert status == 411 and json.loads(answer)["code"] == "length_required"

    # The app gone: 503 with Retry-After.
    stop(proxy["gunicorn"])
    answer = http_request(port, get("/healthz"))
    assert problem_answer(answer, 503)["code"] == "service_unavailable"
    assert answer[1]["retry-after"] == "5"


@pytest.mark.slow
def test_a_client_over_its_request_rate_gets_429_problems_while_other_addresses_pass(plain_proxy):
    # Settings as an operator would tune them (deploy/nginx.env names them): 1 request a
    # second with bursts of 5.
    port = plain_proxy(NGINX_RATE_PER_ADDRESS="1r/s", NGINX_BURST_PER_ADDRESS="5")["port"]
    answers = [http_request(port, get("/livez"), source="127.0.0.3") for _ in range(12)]
    statuses = [status for status, _, _ in answers]
    assert 6 <= statuses.count(200) <= 7 and statuses[:6] == [200] * 6, statuses
    for answer in answers:
        if answer[0] != 200:
            assert problem_answer(answer, 429)["code"] == "rate_limited"
            assert answer[1]["retry-after"] == "1"
    assert http_request(port, get("/livez"), source="127.0.0.1")[0] == 200  # the limit is per address

"""The README's commands, run verbatim on a fresh clone: `make run` serves the service on the
embedded defaults (SQLite, filesystem broker, file cache), a second terminal's manage.py
works, concurrent writers wait instead of failing, and Ctrl-C stops everything.

The clone reuses this checkout's .venv through a symlink (a full install would take minutes);
`make run` itself decides what to install, exactly as on a new machine.
"""

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.mcp.conftest import call_tool

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
LOCAL_CHAIN = (ROOT / "docs" / "local-chain.md").read_text()
RECEIVER = "0x8617E340B3D01FA5F11F306F4090FD50E238070D"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(
    url: str, *, key: str | None = None, body: dict | bytes | None = None, headers: dict | None = None
) -> tuple[int, bytes, dict]:
    headers = dict(headers or {})
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    request = urllib.request.Request(url, data=data, headers=headers)  # noqa: S310 - loopback only
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback only
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def raw_answer(port: int, head: str) -> tuple[int, str, bytes]:
    """Status, Content-Type and body of one request whose head (request line and headers, each
    line ending in CRLF) is sent as it is, no client library rewriting it."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.connect()
    connection.sock.sendall(f"{head}Host: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
    response = http.client.HTTPResponse(connection.sock, method=head.split(" ", 1)[0])
    response.begin()
    answer = response.status, response.getheader("Content-Type", ""), response.read()
    connection.close()
    return answer


def metric_value(text: str, network: str, currency: str) -> float:
    """drafts_created_total for one network and currency in a /metrics answer (0 when absent)."""
    pattern = rf'^drafts_created_total\{{currency="{currency}",network="{network}"\}} (\S+)$'
    found = re.search(pattern, text, re.M)
    return float(found.group(1)) if found else 0.0


def quick_start_commands() -> list[str]:
    """The shell lines of the README's quick start, in order."""
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S):
        joined = block.replace("\\\n", " ")
        lines += [line.split("  #", 1)[0].strip() for line in joined.splitlines() if line.strip()]
    return [line for line in lines if not line.startswith("#")]


def clean_env(**extra: str) -> dict[str, str]:
    """A newcomer's shell: no test settings, no DJANGO_SETTINGS_MODULE, no ENV_FILE."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")}
    return env | extra


@pytest.fixture
def fresh_clone(tmp_path) -> Iterator[Path]:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    (clone / ".venv").symlink_to(ROOT / ".venv")
    # Files are as old as the installed environment, so make sees nothing to reinstall.
    stamp = (ROOT / ".venv" / ".runtime").stat().st_mtime - 60
    for name in ("requirements.txt", "requirements-dev.txt"):
        os.utime(clone / name, (stamp, stamp))
    yield clone
    # A test that failed before its stop finished leaves no service running for the rest of
    # the suite (each test asserts, before this, that its own stop left nothing).
    for signal_name in ("-TERM", "-KILL"):
        if subprocess.run(["pkill", signal_name, "-f", str(clone)], check=False).returncode != 0:
            break
        time.sleep(5)


@pytest.mark.slow
def test_the_readme_commands_work_verbatim_on_a_fresh_clone(fresh_clone, tmp_path):
    commands = quick_start_commands()
    assert commands[0] == "make run"
    key_command = next(c for c in commands if c.startswith(".venv/bin/python manage.py issue_api_key"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "make-run.log"
    env = clean_env(PORT=str(port))
    with open(log, "wb") as out:
        process = subprocess.Popen(
            ["make", "run"], cwd=fresh_clone, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if fetch(f"{base}/healthz")[0] == 200 and "Press Ctrl-C" in log.read_text():
                    break
            except OSError:
                pass
            time.sleep(0.5)
        status, body, _ = fetch(f"{base}/healthz")
        assert status == 200, log.read_text()[-3000:]
        output = log.read_text()

        # A git-ignored local settings file with a generated key; DEBUG off, plain HTTP on loopback.
        env_file = fresh_clone / ".env"
        assert "SECRET_KEY=" in env_file.read_text() and "DEBUG=false" in env_file.read_text()
        assert "FIELD_ENCRYPTION_KEY=" in env_file.read_text()
        assert env_file.stat().st_mode & 0o077 == 0
        assert subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=fresh_clone).returncode == 0
        assert not subprocess.run(["git", "status", "--porcelain"], cwd=fresh_clone, capture_output=True).stdout

        # What is off, and how to turn it on: printed at start, and in /healthz (still 200).
        assert "Note: No fee address for" in output and "FEE_ADDRESS_" in output
        assert "Note: No node endpoint for" in output and "RPC_URL_" in output
        assert any("No fee address" in n for n in json.loads(body)["notices"])

        # Production mode: no debug page listing the URL configuration.
        status, page, _ = fetch(f"{base}/no-such-page")
        assert status == 404 and b"URLconf" not in page and b"api/v1/" not in page
        assert fetch(f"{base}/swagger")[0] == 200
        assert fetch(f"{base}/admin/login/")[0] == 200
        assert b"/api/v1/api-keys" in fetch(f"{base}/llms.txt")[1]
        assert (fresh_clone / "var" / "db.sqlite3").exists()

        # The second terminal: the README's key command as written.
        key = subprocess.run(
            key_command, shell=True, cwd=fresh_clone, env=clean_env(), capture_output=True, text=True, timeout=60
        )
        assert key.returncode == 0, key.stderr
        key = key.stdout.strip()
        assert key.startswith("pdk_")

        # The README's curl lines, against this run's port.
        for command in commands:
            if command.startswith("curl"):
                ran = subprocess.run(
                    command.replace("127.0.0.1:8000", f"127.0.0.1:{port}"),
                    shell=True,
                    env=clean_env(KEY=key),
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert ran.returncode == 0, ran.stderr
                assert json.loads(ran.stdout)["status"] == "Pending", ran.stdout
                draft_id = json.loads(ran.stdout)["id"]
        # The MCP server answers on the same address, with the same key.
        status = call_tool(f"{base}/mcp", key, "get_draft_status", {"id": draft_id})
        assert not status.is_error and status.structured_content["status"] == "Pending"

        # 24 concurrent creations on SQLite: every writer waits for the lock, none gets a 500.
        def create(i: int) -> tuple[int, bytes, dict]:
            return fetch(
                f"{base}/api/v1/drafts",
                key=key,
                body={
                    "network": "Base",
                    "currency": "USDC",
                    "fiatCurrency": "EUR",
                    "fiatAmount": 100 + i,  # distinct amounts: the collision path is tested elsewhere
                    "receiverAddress": RECEIVER,
                },
            )

        created_before = metric_value(fetch(f"{base}/metrics")[1].decode(), "Base", "USDC")
        with ThreadPoolExecutor(24) as pool:
            results = list(pool.map(create, range(24)))
        assert [status for status, _, _ in results] == [201] * 24, [r[1][:300] for r in results if r[0] != 201]
        # Rate-limit counters are shared by both gunicorn workers: each creation used up one more.
        remaining = sorted(int(re.search(r";r=(\d+)", h["RateLimit"]).group(1)) for _, _, h in results)
        assert len(set(remaining)) == 24, remaining

        # A 100,000-deep body is refused before parsing; the worker survives.
        status, body, headers = fetch(f"{base}/api/v1/drafts", key=key, body=b"[" * 100_000 + b"]" * 100_000)
        assert status == 400 and "32 levels" in json.loads(body)["detail"]
        assert fetch(f"{base}/healthz")[0] == 200

        # A chunked body is read (nginx in front passes it on with its length), never taken as empty.
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.putrequest("POST", "/api/v1/drafts")
        connection.putheader("Authorization", f"Bearer {key}")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Transfer-Encoding", "chunked")
        connection.endheaders()
        chunk = b'{"unknownField": 1}'
        connection.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(chunk), chunk))
        answer = connection.getresponse()
        assert answer.status == 400
        assert "unknownField" in [error["field"] for error in json.loads(answer.read())["errors"]]
        connection.close()

        # Every oversize head is refused with a problem document, whichever layer sees it first:
        # request lines of 4, 8, 16 and 64 KB, a header over nginx's 8 KB, and a 30 KB head for
        # the MCP process (uvicorn) that nginx passes on.
        for size, status in ((4096, 401), (8190, 401), (8192, 414), (16384, 414), (65536, 414)):
            pad = "a" * (size - len("GET /api/v1/drafts?pad= HTTP/1.1"))
            answer = raw_answer(port, f"GET /api/v1/drafts?pad={pad} HTTP/1.1\r\n")
            assert answer[:2] == (status, "application/problem+json"), (size, answer)
            assert json.loads(answer[2])["status"] == status
        answer = raw_answer(port, f"GET /healthz HTTP/1.1\r\nX-Big: {'x' * 9000}\r\n")
        assert answer[:2] == (431, "application/problem+json") and json.loads(answer[2])["status"] == 431
        heads = "".join(f"X-Pad-{n}: {'x' * 7500}\r\n" for n in range(4))
        answer = raw_answer(port, f"POST /mcp HTTP/1.1\r\n{heads}Content-Length: 0\r\n")
        assert answer[:2] == (401, "application/problem+json"), answer

        # X-Request-Id: kept when well-formed, returned, and in the access log.
        _, _, headers = fetch(f"{base}/api/v1/fees/schedule", key=key, headers={"X-Request-Id": "readme-check-42"})
        assert headers["X-Request-Id"] == "readme-check-42"
        deadline = time.monotonic() + 10  # gunicorn writes the access line just after answering
        while "request_id=readme-check-42" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)

        # A sign-up code is emailed into a file under var/mail that only this user can read,
        # never printed (the banner says where emails go).
        assert "Emails:" in output and "var/mail" in output
        status, body, _ = fetch(
            f"{base}/api/v1/auth/password/register", body={"email": "new@example.com", "password": "Lo" + "ng" * 8}
        )
        assert status == 200, body
        mail = fresh_clone / "var" / "mail"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (mail.exists() and any(mail.iterdir())):
            time.sleep(0.5)
        assert mail.stat().st_mode & 0o077 == 0
        (message,) = mail.iterdir()
        code = re.search(r"code: ([0-9A-Z]{5}-[0-9A-Z]{5})", message.read_text()).group(1)

        # The demo (README quick start): one anonymous POST, then the payment simulator that
        # `make run` turns on walks the draft through Seen to Confirmed on its own.
        status, body, _ = fetch(f"{base}/api/v1/demo/drafts", body={"network": "Testnet", "currency": "BTC"})
        assert status == 201, body
        demo_url = f"{base}/api/v1/demo/drafts/{json.loads(body)['id']}"
        states: list[str] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and states[-1:] != ["Confirmed"]:
            state = json.loads(fetch(demo_url)[1])["status"]
            states += [state] if states[-1:] != [state] else []
            time.sleep(0.5)
        assert states == ["Pending", "Seen", "Confirmed"], states

        # /metrics through nginx from loopback: both gunicorn workers' and the Celery worker's
        # counts in one answer (prometheus-client's multiprocess mode, var/metrics).
        status, body, _ = fetch(f"{base}/metrics")
        assert status == 200, body[:500]
        text = body.decode()
        assert metric_value(text, "Base", "USDC") - created_before == 24, text[:3000]
        confirmed = re.search(r'^drafts_confirmed_total\{currency="BTC",network="Testnet"\} (\S+)$', text, re.M)
        assert confirmed and float(confirmed.group(1)) >= 1, text[:3000]
        assert re.search(r'^http_requests_total\{method="POST",route="draft-list",status="201"\} ', text, re.M)
    finally:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=60)
    output = log.read_text()
    assert "request_id=readme-check-42" in output, output[-3000:]
    assert code not in output
    # The worker and beat run with a sane recursion limit (py_ecc raises it to 100,000 on import).
    assert len(re.findall(r"started with recursion limit 1000\b", output)) >= 2, output[-3000:]
    assert "issue_api_key" in output
    time.sleep(1)
    leftover = subprocess.run(["pgrep", "-f", str(fresh_clone)], capture_output=True, text=True).stdout.split()
    assert not leftover, f"processes left running: {leftover}"
    with pytest.raises(OSError):
        fetch(f"{base}/healthz")


@pytest.mark.slow
def test_the_quick_start_example_environment_turns_the_notices_off(fresh_clone):
    """The example environment of a local test setup (docs/local-chain.md, what `make devchain`
    writes) names a fee address and a node for every network it enables, so nothing is left off."""
    example = re.search(r"```ini\n(.*?)```", LOCAL_CHAIN, flags=re.S).group(1)
    env_file = fresh_clone / "example.env"
    env_file.write_text(example)
    ran = subprocess.run(
        [".venv/bin/python", "manage.py", "notices"],
        cwd=fresh_clone,
        env=clean_env(
            ENV_FILE=str(env_file),
            SECRET_KEY="example-" + "k" * 40,
            FIELD_ENCRYPTION_KEY="example-" + "f" * 40,
            VAR_DIR=str(fresh_clone / "var"),
        ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == ""


def _session_processes(session: int) -> dict[int, tuple[int, str]]:
    """The processes `make run` started (it runs in a session of its own): pid -> (parent, command)."""
    ps = subprocess.run(["ps", "-ww", "-e", "-o", "pid=,ppid=,sid=,args="], capture_output=True, text=True, check=True)
    rows = (line.split(None, 3) for line in ps.stdout.splitlines())
    return {int(pid): (int(ppid), args) for pid, ppid, sid, args in rows if int(sid) == session}


def leave_env_and_var_readable(clone: Path) -> None:
    """What an earlier run may have left: a .env (without FIELD_ENCRYPTION_KEY) and var/ (the
    SQLite file, the broker's directory) readable or writable by every local user."""
    env_file = clone / ".env"
    env_file.write_text(
        f"SECRET_KEY={'s' * 50}\nDEBUG=false\nSECURE_SSL_REDIRECT=false\nSESSION_COOKIE_SECURE=false\n"
        "CSRF_COOKIE_SECURE=false\nSECURE_HSTS_SECONDS=0\n"
        "ENABLED_NETWORKS=Mainnet,Solana,Ethereum,Base,Testnet,SolanaDevnet,Sepolia,BaseSepolia\n"
    )
    var = clone / "var"
    (var / "broker").mkdir(parents=True)
    (var / "db.sqlite3").touch()  # an empty file is an empty SQLite database
    for path, mode in ((env_file, 0o644), (var, 0o755), (var / "broker", 0o777), (var / "db.sqlite3", 0o644)):
        path.chmod(mode)


def assert_env_and_var_are_this_users(clone: Path) -> None:
    """.env holds the keys and var/ the SQLite database and the broker's messages: this user's
    only, and an earlier .env has been given the FIELD_ENCRYPTION_KEY it lacked."""
    env_file, var = clone / ".env", clone / "var"
    assert "FIELD_ENCRYPTION_KEY=" in env_file.read_text()
    loose = [
        f"{path.relative_to(clone)} {oct(path.stat().st_mode & 0o777)}"
        for path in [env_file, var, *var.rglob("*")]
        if not path.is_symlink() and path.stat().st_mode & 0o077
    ]
    assert not loose, loose
    assert (var / "db.sqlite3").stat().st_size > 0  # migrated: the file in use is the one tightened


@pytest.mark.slow
def test_make_run_tightens_what_an_earlier_run_left_and_starts_a_process_that_dies_again(fresh_clone, tmp_path):
    """One `make run` (each start costs a migration and a collectstatic) over what an earlier run
    left readable by everyone: .env and var/ are made this user's; then its worker is killed: it
    is started again, the rest keeps serving, and Ctrl-C leaves no process behind."""
    leave_env_and_var_readable(fresh_clone)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "make-run.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            ["make", "run"],
            cwd=fresh_clone,
            env=clean_env(PORT=str(port)),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and process.poll() is None and "Press Ctrl-C" not in log.read_text():
            time.sleep(0.5)
        assert fetch(f"{base}/healthz")[0] == 200, log.read_text()[-3000:]
        assert_env_and_var_are_this_users(fresh_clone)

        def worker_masters() -> list[int]:
            """The main worker's main process (its pool processes are its children)."""
            processes = _session_processes(process.pid)
            workers = {pid for pid, (_, args) in processes.items() if "worker@" in args and "email@" not in args}
            return [pid for pid in workers if processes[pid][0] not in workers]

        deadline = time.monotonic() + 120
        while len(worker_masters()) != 1 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len(worker_masters()) == 1, (_session_processes(process.pid), log.read_text()[-3000:])
        [killed] = worker_masters()
        os.kill(killed, signal.SIGKILL)

        deadline = time.monotonic() + 30
        while "the worker stopped" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        output = log.read_text()
        assert "run.sh: the worker stopped (exit status 137); started it again after 1 s." in output, output[-3000:]
        assert fetch(f"{base}/healthz")[0] == 200  # the others kept running

        # The new worker does the work: the demo draft walks to Confirmed (beat ticks, worker runs).
        status, body, _ = fetch(f"{base}/api/v1/demo/drafts", body={"network": "Testnet", "currency": "BTC"})
        assert status == 201, body
        demo_url = f"{base}/api/v1/demo/drafts/{json.loads(body)['id']}"
        deadline = time.monotonic() + 90
        state = ""
        while time.monotonic() < deadline and state != "Confirmed":
            state = json.loads(fetch(demo_url)[1])["status"]
            time.sleep(0.5)
        assert state == "Confirmed", log.read_text()[-3000:]
        assert killed not in _session_processes(process.pid)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=60)
    time.sleep(1)
    assert not _session_processes(process.pid), "processes left running after Ctrl-C"

"""Production installs requirements.txt alone (the Dockerfile does): everything the service
imports at run time must come from that file, not from requirements-dev.txt. requirements.txt is
the lock of requirements.in (`make lock`), so each import must be pinned by name in requirements.in,
not only be there as another package's dependency.

`production_venv` builds a virtual environment from requirements.txt only (--require-hashes), kept
between runs under a folder named by the file's hash (a changed file builds a new one), then a Celery worker
from that environment starts on Redis and on RabbitMQ and answers a ping sent from the same
environment. A transport that needs a package missing from requirements.txt (kombu's Redis
transport imports `packaging`) fails to start here.
"""

import ast
import hashlib
import importlib.metadata
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "requirements.txt"
PINNED = ROOT / "requirements.in"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "payment-drafts-venvs"
SURFACES = [p for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists() and p.name != "tests"]


def requirement_names() -> set[str]:
    names = set()
    for line in PINNED.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(re.split(r"[=<>\[ ;~!]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


def runtime_imports() -> dict[str, set[str]]:
    """Top-level modules imported by the service's own packages (not tests or benches), by file."""
    local = {p.name for p in ROOT.iterdir() if p.is_dir()}
    found: dict[str, set[str]] = {}
    for package in SURFACES:
        for path in package.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                for name in names:
                    top = name.split(".", 1)[0]
                    if top not in sys.stdlib_module_names and top not in local:
                        found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_runtime_import_is_pinned_in_requirements_in():
    pinned = requirement_names()
    distributions = importlib.metadata.packages_distributions()
    missing = {}
    for module, files in runtime_imports().items():
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not names & pinned:
            missing[module] = sorted(files)[:3]
    assert not missing, f"imported at run time but not pinned in requirements.in: {missing}"


def locked(path: Path) -> dict[str, tuple[str, int]]:
    """A lock's packages: name -> (version, number of hashes)."""
    found: dict[str, tuple[str, int]] = {}
    for entry in re.split(r"\n(?=[A-Za-z0-9])", path.read_text()):
        pin = re.match(r"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^ ;\\\n]+)", entry)
        if pin:
            found[re.sub(r"[-_.]+", "-", pin.group(1)).lower()] = (pin.group(2), entry.count("--hash=sha256:"))
    return found


def pins(path: Path) -> dict[str, str]:
    """The `name==version` lines of a requirements*.in file (its -r/-c lines left out)."""
    found = {}
    for line in path.read_text().splitlines():
        pin = re.match(r"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==(\S+)", line.split("#", 1)[0].strip())
        if pin:
            found[re.sub(r"[-_.]+", "-", pin.group(1)).lower()] = pin.group(2)
    return found


def test_the_locks_hold_every_pin_of_the_in_files_each_package_with_its_hashes():
    """requirements.txt locks requirements.in, requirements-dev.txt both .in files: a pin changed in
    an .in file without `make lock` fails here, as does a lock entry without hashes (which
    `pip install --require-hashes` would refuse)."""
    runtime, dev = locked(REQUIREMENTS), locked(ROOT / "requirements-dev.txt")
    assert len(runtime) > len(pins(PINNED)) and "django" in runtime
    for lock, wanted in ((runtime, pins(PINNED)), (dev, pins(PINNED) | pins(ROOT / "requirements-dev.in"))):
        stale = {
            name: (version, lock.get(name, ("missing",))[0])
            for name, version in wanted.items()
            if lock.get(name, ("",))[0] != version
        }
        assert not stale, f"run `make lock`: pinned / locked {stale}"
        assert all(hashes for _, hashes in lock.values()), [n for n, (_, h) in lock.items() if not h]
    # The dev lock installs the runtime packages at the versions production runs.
    assert {name: dev[name][0] for name in runtime} == {name: version for name, (version, _) in runtime.items()}


@pytest.fixture(scope="module")
def production_venv() -> Path:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]
    venv = CACHE / f"py{sys.version_info.major}{sys.version_info.minor}-{digest}"
    python = venv / "bin" / "python"
    if not (venv / ".complete").exists():
        shutil.rmtree(venv, ignore_errors=True)
        venv.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--require-hashes",
                "-r",
                str(REQUIREMENTS),
            ],
            check=True,
            timeout=900,
        )
        (venv / ".complete").touch()
    return venv


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


BROKERS = {
    "redis": ("redis://127.0.0.1:6379/15", 6379),
    "rabbitmq": ("amqp://guest:guest@127.0.0.1:5672//", 5672),
}


@pytest.mark.slow
@pytest.mark.parametrize("broker", sorted(BROKERS))
def test_a_worker_from_requirements_txt_alone_runs_on_each_broker(broker, production_venv, tmp_path):
    url, port = BROKERS[broker]
    assert port_open(port), f"{broker} is not answering on 127.0.0.1:{port} (make test starts it)"
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")}
    env |= {
        "ENV_FILE": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "runtime-requirements-check-" + uuid.uuid4().hex,
        "FIELD_ENCRYPTION_KEY": "runtime-requirements-field-key-" + uuid.uuid4().hex,
        "DEBUG": "false",
        "VAR_DIR": str(tmp_path / "var"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CELERY_BROKER_URL": url,
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    celery = str(production_venv / "bin" / "celery")
    node = f"check-{broker}-{uuid.uuid4().hex[:8]}@localhost"
    queue = f"check-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen(
            [celery, "-A", "config", "worker", "-n", node, "-Q", queue, "-c", "1", "--pool", "solo", "-l", "INFO"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert worker.poll() is None, f"the worker exited on {broker}:\n{log.read_text()[-3000:]}"
            if "ready." in log.read_text():
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the worker never became ready on {broker}:\n{log.read_text()[-3000:]}")
        ping = subprocess.run(
            [celery, "-A", "config", "inspect", "ping", "-d", node, "--timeout", "10"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ping.returncode == 0 and "pong" in ping.stdout, ping.stdout + ping.stderr
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()

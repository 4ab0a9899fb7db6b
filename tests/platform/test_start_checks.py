"""Configuration fails at start, not at first use; per-network settings share one spelling;
the embedded default shares its cache between processes."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import fresh

ROOT = Path(__file__).resolve().parents[2]
BAD_TOKEN = '{"USDC": {"Ethereum": "0x5FbDB2315678afecb367f032d93F642f64180aa4"}}'  # checksum broken


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    return (
        env
        | {
            "ENV_FILE": "",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "start-check-" + "k" * 40,
            "FIELD_ENCRYPTION_KEY": "start-check-" + "f" * 40,
            "VAR_DIR": str(tmp_path / "var"),
        }
        | extra
    )


def run_until_exit(command: list[str], env: dict[str, str], timeout: float = 90) -> tuple[int | None, str]:
    """Start a long-running process; return its exit code and output (None if it kept running)."""
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        output = process.communicate(timeout=timeout)[0]
        return process.returncode, output.decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return None, process.communicate()[0].decode(errors="replace")


@pytest.mark.slow
def test_a_malformed_token_address_stops_check_the_web_server_and_the_workers(tmp_path):
    env = base_env(tmp_path, TOKEN_ADDRESSES=BAD_TOKEN)
    check = fresh.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, timeout=60)
    assert check.returncode != 0 and "TOKEN_ADDRESSES" in check.stderr
    assert "USDC on Ethereum" in check.stderr

    code, output = run_until_exit(
        [".venv/bin/gunicorn", "config.wsgi:application", "--bind", "127.0.0.1:0", "--workers", "1"], env
    )
    assert code not in (None, 0) and "TOKEN_ADDRESSES" in output

    broker = env | {"CELERY_BROKER_URL": "filesystem://"}
    code, output = run_until_exit([".venv/bin/celery", "-A", "config", "worker", "--pool", "solo"], broker)
    assert code not in (None, 0) and "TOKEN_ADDRESSES" in output
    code, output = run_until_exit([".venv/bin/celery", "-A", "config", "beat"], broker)
    assert code not in (None, 0) and "TOKEN_ADDRESSES" in output


def test_a_malformed_fee_tier_stops_check_naming_the_variable(tmp_path):
    env = base_env(tmp_path, FEE_TIERS='[{"upToUsd": 10, "percent": "lots"}]')
    check = fresh.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, timeout=60)
    assert check.returncode != 0 and "FEE_TIERS" in check.stderr


PRINT_FEE_ADDRESSES = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps(s.PLATFORM_FEE_ADDRESSES))"
)
SEPOLIA_ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"


@pytest.mark.parametrize("variable", ["FEE_ADDRESS_BASE_SEPOLIA", "FEE_ADDRESS_BASESEPOLIA"])
def test_fee_addresses_accept_the_snake_case_and_the_older_joined_spelling(tmp_path, variable):
    result = fresh.run(
        [sys.executable, "-c", PRINT_FEE_ADDRESSES],
        cwd=ROOT,
        env=base_env(tmp_path, **{variable: SEPOLIA_ADDRESS}),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '{"BaseSepolia": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}'


def test_two_different_spellings_of_one_fee_address_stop_the_service(tmp_path):
    env = base_env(
        tmp_path,
        FEE_ADDRESS_BASE_SEPOLIA=SEPOLIA_ADDRESS,
        FEE_ADDRESS_BASESEPOLIA="0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    )
    result = fresh.run([sys.executable, "-c", PRINT_FEE_ADDRESSES], cwd=ROOT, env=env, timeout=60)
    assert result.returncode != 0 and "set only FEE_ADDRESS_BASE_SEPOLIA" in result.stderr


def test_a_bad_fee_address_is_named_by_the_variable_that_was_set(tmp_path):
    env = base_env(tmp_path, FEE_ADDRESS_BASE_SEPOLIA="0xnot-an-address")
    check = fresh.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, timeout=60)
    assert check.returncode != 0 and "FEE_ADDRESS_BASE_SEPOLIA='0xnot-an-address'" in check.stderr


COUNT = """
import sys, django
django.setup()
from django.core.cache import cache
cache.add("hits", 0, timeout=600)
for _ in range(int(sys.argv[1])):
    cache.incr("hits")
"""


@pytest.mark.slow  # two processes each counting 200 times through the file lock
def test_the_embedded_cache_counts_together_across_processes(tmp_path):
    env = base_env(tmp_path)
    env.pop("CACHE_URL", None)
    processes = [
        subprocess.Popen([sys.executable, "-c", COUNT, "200"], cwd=ROOT, env=env, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for process in processes:
        assert process.wait(timeout=120) == 0, process.stderr.read().decode()
    total = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.core.cache import cache; print(cache.get('hits'))",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert total.stdout.strip() == "400", total.stderr


def test_a_cache_counter_keeps_its_expiry_when_incremented(tmp_path, settings):
    from core.cache import LockedFileCache

    cache = LockedFileCache(str(tmp_path / "cache"), {})
    cache.add("window", 0, timeout=1)
    assert cache.incr("window") == 1
    time.sleep(1.1)
    assert cache.get("window") is None
    with pytest.raises(ValueError):
        cache.incr("window")

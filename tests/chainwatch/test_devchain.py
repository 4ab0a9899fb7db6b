"""`manage.py devchain` on real anvil nodes, the .env it rewrites, and `manage.py devpay` paying
drafts that the watcher then sees and confirms."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient
from web3 import Web3

from chainwatch.devchain import TOKEN_ARTIFACT
from chainwatch.tasks import chainwatch_run
from core.env import env_file_set, env_file_values
from tests.chainwatch.conftest import free_port
from webhooks.models import Event

REPO = Path(__file__).resolve().parents[2]
ANVIL_FIRST_ACCOUNT = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"


# --- The settings file ------------------------------------------------------------------


def test_setting_keys_replaces_each_in_place_drops_repeats_and_keeps_the_rest(tmp_path):
    env = tmp_path / ".env"
    env.write_text(
        "# written by make run\nSECRET_KEY=abc\nENABLED_NETWORKS=Mainnet,Sepolia\n\n"
        "# added by hand, as the README once said\nENABLED_NETWORKS=Sepolia\nDEBUG=false\n"
    )
    env_file_set(env, {"ENABLED_NETWORKS": "Sepolia,BaseSepolia", "RPC_URL_SEPOLIA": "http://127.0.0.1:8545"})
    assert env.read_text() == (
        "# written by make run\nSECRET_KEY=abc\nENABLED_NETWORKS=Sepolia,BaseSepolia\n\n"
        "# added by hand, as the README once said\nDEBUG=false\n\nRPC_URL_SEPOLIA=http://127.0.0.1:8545\n"
    )
    env_file_set(env, {"ENABLED_NETWORKS": "Sepolia", "RPC_URL_SEPOLIA": "http://127.0.0.1:9545"})
    text = env.read_text()
    assert text.count("ENABLED_NETWORKS=") == 1 and text.count("RPC_URL_SEPOLIA=") == 1
    assert env_file_values(env)["RPC_URL_SEPOLIA"] == "http://127.0.0.1:9545"


def test_a_new_settings_file_is_readable_by_its_owner_only(tmp_path):
    env = tmp_path / ".env"
    env_file_set(env, {"A": "1"}, comment="first line")
    assert env.read_text() == "# first line\nA=1\n"
    assert env.stat().st_mode & 0o777 == 0o600


def test_the_settings_reader_warns_on_a_repeated_key_and_uses_its_last_line(tmp_path):
    env = tmp_path / "dup.env"
    env.write_text("ENABLED_NETWORKS=Mainnet\nSECRET_KEY=x\nENABLED_NETWORKS=Sepolia\n")
    # manage.py reads the file as every entry point does; the warning is on its stderr
    run = subprocess.run(  # noqa: S603
        [
            sys.executable,
            "-c",
            "import os; from core.env import load_local_env; load_local_env(); print(os.environ['ENABLED_NETWORKS'])",
        ],
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if k != "ENABLED_NETWORKS"} | {"ENV_FILE": str(env)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Sepolia"
    assert f"{env}:3 sets ENABLED_NETWORKS again (also on line 1); line 3 is used." in run.stderr


# --- devchain on real anvil nodes ----------------------------------------------------------


class Devchain:
    def __init__(self, env_file: Path) -> None:
        self.env_file = env_file
        self.ports = {"Sepolia": free_port(), "BaseSepolia": free_port()}
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
        self.process = subprocess.Popen(  # noqa: S603
            [
                sys.executable,
                "manage.py",
                "devchain",
                *("--sepolia-port", str(self.ports["Sepolia"])),
                *("--base-sepolia-port", str(self.ports["BaseSepolia"])),
                *("--env-file", str(env_file)),
            ],
            cwd=REPO,
            env=env | {"DJANGO_SETTINGS_MODULE": "tests.settings", "ENV_FILE": ""},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output: list[str] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line and self.process.poll() is not None:
                pytest.fail("devchain stopped:\n" + "".join(self.output))
            self.output.append(line)
            if line.startswith("Ready."):
                return
        self.stop()
        pytest.fail("devchain was not ready within 120 s:\n" + "".join(self.output))

    @property
    def values(self) -> dict[str, str]:
        return env_file_values(self.env_file)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()


@pytest.fixture
def start_devchain(tmp_path):
    started: list[Devchain] = []

    def start(env_file: Path | None = None) -> Devchain:
        chain = Devchain(env_file or tmp_path / ".env")
        started.append(chain)
        return chain

    yield start
    for chain in started:
        if chain.process.poll() is None:
            chain.stop()


def token(w3: Web3, address: str):
    return w3.eth.contract(address=address, abi=json.loads(TOKEN_ARTIFACT.read_text())["abi"])


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_devchain_runs_sepolia_and_base_sepolia_with_funded_test_tokens_and_writes_env(tmp_path, start_devchain):
    env_file = tmp_path / ".env"
    env_file.write_text("SECRET_KEY=s\nENABLED_NETWORKS=Mainnet,Sepolia\nENABLED_NETWORKS=Mainnet\n")
    chain = start_devchain(env_file)
    values = chain.values
    assert values["ENABLED_NETWORKS"] == "Mainnet,Sepolia,BaseSepolia"  # the file's last line, plus both
    assert values["RPC_URL_SEPOLIA"] == f"http://127.0.0.1:{chain.ports['Sepolia']}"
    assert values["RPC_URL_BASE_SEPOLIA"] == f"http://127.0.0.1:{chain.ports['BaseSepolia']}"
    tokens = json.loads(values["TOKEN_ADDRESSES"])
    assert sorted(tokens) == ["BTC", "EURC", "USDC", "USDT"]
    assert sorted(tokens["USDC"]) == ["BaseSepolia", "Sepolia"] and sorted(tokens["EURC"]) == ["BaseSepolia", "Sepolia"]
    assert list(tokens["USDT"]) == ["Sepolia"] and list(tokens["BTC"]) == ["Sepolia"]  # as the registry has them
    expected = {"USDC": ("USDC", 6), "USDT": ("USDT", 6), "EURC": ("EURC", 6), "BTC": ("WBTC", 8)}
    for network, chain_id in (("Sepolia", 11155111), ("BaseSepolia", 84532)):
        w3 = Web3(Web3.HTTPProvider(f"http://127.0.0.1:{chain.ports[network]}"))
        assert w3.eth.chain_id == chain_id
        for currency, per_network in tokens.items():
            if network in per_network:
                contract = token(w3, per_network[network])
                symbol, decimals = expected[currency]
                assert (contract.functions.symbol().call(), contract.functions.decimals().call()) == (symbol, decimals)
                assert contract.functions.balanceOf(ANVIL_FIRST_ACCOUNT).call() >= 1000 * 10**decimals
    text = env_file.read_text()
    assert text.startswith("SECRET_KEY=s\n") and text.count("ENABLED_NETWORKS=") == 1
    page = (REPO / "docs" / "local-chain.md").read_text()
    example = dict(
        line.split("=", 1) for line in re.search(r"```ini\n(.*?)```", page, flags=re.S).group(1).splitlines()
    )
    assert json.loads(example["TOKEN_ADDRESSES"]) == tokens  # docs/local-chain.md shows what a start writes
    assert example["FEE_ADDRESS_SEPOLIA"] == values["FEE_ADDRESS_SEPOLIA"]

    assert chain.stop() == 0
    assert not port_open(chain.ports["Sepolia"]) and not port_open(chain.ports["BaseSepolia"])  # anvil stopped

    again = start_devchain(env_file)  # a second run rewrites the same keys, appends nothing
    assert again.env_file.read_text().count("RPC_URL_SEPOLIA=") == 1
    assert again.values["RPC_URL_SEPOLIA"] == f"http://127.0.0.1:{again.ports['Sepolia']}"
    assert json.loads(again.values["TOKEN_ADDRESSES"]) == tokens  # a fresh chain: the same addresses


@pytest.fixture
def dev_settings(start_devchain, settings):
    """The service pointed at a running devchain through the settings devchain wrote."""
    chain = start_devchain()
    values = chain.values
    settings.CHAINWATCH_ENDPOINTS = {
        "Sepolia": {"rpc_url": values["RPC_URL_SEPOLIA"]},
        "BaseSepolia": {"rpc_url": values["RPC_URL_BASE_SEPOLIA"]},
    }
    settings.TOKEN_ADDRESSES = json.loads(values["TOKEN_ADDRESSES"])
    settings.PLATFORM_FEE_ADDRESSES = {
        "Sepolia": values["FEE_ADDRESS_SEPOLIA"],
        "BaseSepolia": values["FEE_ADDRESS_BASE_SEPOLIA"],
    }
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    settings.API_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}
    return chain


def watch_until(api_client, draft_id: str, network: str, status: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        chainwatch_run(network, "evm")
        body = api_client.get(f"/api/v1/drafts/{draft_id}/status").json()
        if body["status"] == status:
            return body
        time.sleep(0.5)
    pytest.fail(f"draft {draft_id} not {status} within {timeout} s: {body}")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("network", "currency", "amount"),
    [("Sepolia", "USDC", 25_000_000), ("BaseSepolia", "ETH", 1_500_000), ("Sepolia", "BTC", 12_345)],
)
def test_devpay_pays_a_draft_that_the_watcher_then_sees_and_confirms(
    dev_settings, api_client, network, currency, amount, capsys
):
    receiver = Web3.to_checksum_address("0x" + os.urandom(20).hex())
    chainwatch_run(network, "evm")  # the watcher is running before the payment, as under make run
    draft = api_client.post(
        "/api/v1/drafts",
        {
            "network": network,
            "currency": currency,
            "receiverAddress": receiver,
            "amountSats": amount,
            "requiredConfirmations": 2,
        },
        format="json",
    ).json()
    assert draft["status"] == "Pending", draft

    call_command("devpay", draft["id"])
    assert f"Paid draft {draft['id']}" in capsys.readouterr().out

    seen = watch_until(api_client, draft["id"], network, "Seen")
    assert seen["txId"]
    confirmed = watch_until(api_client, draft["id"], network, "Confirmed")
    assert confirmed["confirmations"] >= 2
    events = list(Event.objects.filter(draft_id=draft["id"]).order_by("created_at").values_list("type", flat=True))
    assert events == ["draft.created", "draft.seen", "draft.confirmed"]
    with pytest.raises(CommandError, match="only a Pending draft is paid"):
        call_command("devpay", draft["id"])


@pytest.mark.django_db
def test_devpay_pays_the_draft_a_payer_picked_on_a_pay_link(dev_settings, api_client, capsys):
    receiver = Web3.to_checksum_address("0x" + os.urandom(20).hex())
    link = api_client.post(
        "/api/v1/payment-requests",
        {
            "fiatCurrency": "USD",
            "fiatAmount": 12.5,
            "options": [{"currency": "USDC", "network": "Sepolia", "receiverAddress": receiver}],
        },
        format="json",
    ).json()
    with pytest.raises(CommandError, match="whose payer has picked an asset"):
        call_command("devpay", link["id"])
    picked = APIClient().post(  # the payer, anonymous, picks on the pay page
        f"/api/v1/checkout/{link['token']}/select", {"currency": "USDC", "network": "Sepolia"}, format="json"
    )
    assert picked.status_code in (200, 201), picked.json()

    call_command("devpay", link["id"])
    assert "Paid draft" in capsys.readouterr().out
    draft_id = api_client.get(f"/api/v1/payment-requests/{link['id']}").json()["draftId"]
    watch_until(api_client, draft_id, "Sepolia", "Confirmed")
    assert api_client.get(f"/api/v1/payment-requests/{link['id']}").json()["status"] == "Paid"


@pytest.mark.django_db
def test_devpay_refuses_a_draft_off_the_local_test_chains(api_client):
    draft = api_client.post(
        "/api/v1/drafts",
        {
            "network": "Base",
            "currency": "USDC",
            "receiverAddress": "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
            "amountSats": 1_000_000,
        },
        format="json",
    ).json()
    with pytest.raises(CommandError, match="local test chains only"):
        call_command("devpay", draft["id"])
    with pytest.raises(CommandError, match="no id"):
        call_command("devpay", "nope")

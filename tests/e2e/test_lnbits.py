"""A real LNbits (scripts/lnbits-venv.sh, pinned) with its FakeWallet and SQLite: two wallets,
a real invoice paid from one to the other inside LNbits, and the service's Lightning watcher
confirming the draft with the preimage LNbits reports. FakeWallet makes mainnet (lnbc)
invoices only."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from chainwatch.models import Cursor
from chainwatch.tasks import watcher_run
from tests.chainwatch.conftest import free_port
from webhooks.models import Event

ROOT = Path(__file__).resolve().parents[2]
LNBITS = ROOT / "var/lnbits-venv/bin/lnbits"
ADMIN_PASSWORD = "local-test-only-1"

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class LNbits:
    url: str
    shop: dict  # the merchant's wallet (its invoice key is the service's LNBITS_API_KEY)
    payer: dict

    def invoice(self, sats: int, *, expiry: int = 3600) -> dict:
        answer = requests.post(
            f"{self.url}/api/v1/payments",
            json={"out": False, "amount": sats, "memo": "order 7", "expiry": expiry},
            headers={"X-Api-Key": self.shop["inkey"]},
            timeout=10,
        )
        assert answer.status_code == 201, answer.text
        return answer.json()

    def pay(self, bolt11: str) -> dict:
        answer = requests.post(
            f"{self.url}/api/v1/payments",
            json={"out": True, "bolt11": bolt11},
            headers={"X-Api-Key": self.payer["adminkey"]},
            timeout=10,
        )
        assert answer.status_code == 201, answer.text
        return answer.json()


@pytest.fixture(scope="module")
def lnbits(tmp_path_factory) -> Iterator[LNbits]:
    if not LNBITS.exists():
        message = "LNBITS IS NOT INSTALLED: the LNbits end-to-end test is SKIPPED (run scripts/lnbits-venv.sh)"
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)
    data = tmp_path_factory.mktemp("lnbits")
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(data),
        "LNBITS_DATA_FOLDER": str(data),
        "LNBITS_ADMIN_UI": "true",
        "LNBITS_BACKEND_WALLET_CLASS": "FakeWallet",
        "LNBITS_EXTENSIONS_DEFAULT_INSTALL": "",
    }
    site = next((ROOT / "var/lnbits-venv/lib").glob("python*/site-packages"))
    process = subprocess.Popen(
        [str(LNBITS), "--host", "127.0.0.1", "--port", str(port)],
        cwd=site,  # LNbits finds its static files from there
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(data / "lnbits.log").open("w"),
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if requests.get(f"{url}/api/v1/health", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert process.poll() is None, (data / "lnbits.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "LNbits did not start in 90 s"
            time.sleep(0.5)
        # The first start has a super user without credentials; topping up a wallet needs them.
        login = requests.put(
            f"{url}/api/v1/auth/first_install",
            json={"username": "admin", "password": ADMIN_PASSWORD, "password_repeat": ADMIN_PASSWORD},
            timeout=10,
        )
        assert login.status_code == 200, login.text
        token = login.json()["access_token"]
        shop = requests.post(f"{url}/api/v1/account", json={"name": "shop"}, timeout=10).json()
        payer = requests.post(f"{url}/api/v1/account", json={"name": "payer"}, timeout=10).json()
        top_up = requests.put(
            f"{url}/users/api/v1/balance",
            json={"id": payer["id"], "amount": 1_000_000},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        assert top_up.status_code == 200, top_up.text
        yield LNbits(url=url, shop=shop, payer=payer)
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=20)
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def node(lnbits, settings) -> LNbits:
    settings.LNBITS_URL, settings.LNBITS_API_KEY = lnbits.url, lnbits.shop["inkey"]
    settings.LND_REST_URL = ""
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    return lnbits


def test_an_invoice_paid_inside_lnbits_confirms_its_draft_with_the_preimage(node, api_client):
    invoice = node.invoice(2_100)
    created = api_client.post("/api/v1/drafts", {"network": "Mainnet", "bolt11": invoice["bolt11"]}, format="json")
    assert created.status_code == 201, created.json()
    draft = created.json()
    assert draft["paymentHash"] == invoice["payment_hash"] and draft["amountSats"] == 2_100
    watcher_run("Mainnet", "lightning")
    assert api_client.get(f"/api/v1/drafts/{draft['id']}").json()["status"] == "Pending"

    paid = node.pay(invoice["bolt11"])
    watcher_run("Mainnet", "lightning")

    assert Cursor.objects.get(network="Mainnet", family="lightning").last_error == ""
    status = api_client.get(f"/api/v1/drafts/{draft['id']}").json()
    assert status["status"] == "Confirmed"
    # LNbits' own record of the payment: its preimage is what the watcher checked.
    listed = requests.get(
        f"{node.url}/api/v1/payments/{paid['payment_hash']}", headers={"X-Api-Key": node.shop["inkey"]}, timeout=10
    ).json()
    assert listed["paid"] is True
    assert hashlib.sha256(bytes.fromhex(listed["preimage"])).hexdigest() == draft["paymentHash"]
    types = list(Event.objects.filter(draft_id=draft["id"]).order_by("created_at").values_list("type", flat=True))
    assert types == ["draft.created", "draft.seen", "draft.confirmed"]


def test_an_expired_lnbits_invoice_is_refused(node, api_client):
    invoice = node.invoice(2_200, expiry=1)
    time.sleep(2)

    response = api_client.post("/api/v1/drafts", {"network": "Mainnet", "bolt11": invoice["bolt11"]}, format="json")

    assert response.status_code == 400 and response.json()["code"] == "invoice_expired"


def test_an_lnbits_mainnet_invoice_is_refused_for_a_testnet_draft(node, api_client):
    invoice = node.invoice(2_300)
    assert invoice["bolt11"].startswith("lnbc")

    response = api_client.post("/api/v1/drafts", {"network": "Testnet", "bolt11": invoice["bolt11"]}, format="json")

    assert response.status_code == 400 and response.json()["code"] == "invoice_network_mismatch"

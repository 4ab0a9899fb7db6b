# ruff: noqa: F811 - the fixtures imported below are the arguments of the tests
"""Paying a Lightning draft from a WebLN wallet in the payer's browser (a page-injected WebLN
provider paying from a wallet of a real LNbits), against a live server; the pay page without
WebLN keeps its invoice. The EVM wallets: test_pay_from_browser_wallet.py."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from playwright.sync_api import expect

from drafts.models import Draft
from tests.e2e.test_lnbits import LNbits, lnbits  # noqa: F401 - a real LNbits, as the Lightning e2e test runs it
from tests.ownservers import serve_in_background
from tests.paylinks.test_pay_from_browser_wallet import (
    WEBLN,
    audited,
    chosen_link,
    first_action,
    open_pay_page,
    run_in_thread,
    shot,
)
from tests.paylinks.test_pay_page_browser import CHROMIUM, PHONE, browser_env, live_asgi  # noqa: F401

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]

METADATA = json.dumps([["text/plain", "Pay the test shop"], ["text/identifier", "shop@127.0.0.1"]])


@pytest.fixture
def lightning_address(lnbits, settings):  # noqa: F811
    """An LNURL-pay server (LUD-06, LUD-16) for the shop's LNbits wallet: its callback makes the
    invoice in LNbits, whose settled payments the service's Lightning watcher reads."""
    settings.LNBITS_URL, settings.LNBITS_API_KEY = lnbits.url, lnbits.shop["inkey"]
    settings.LND_REST_URL = ""
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            url = urlsplit(self.path)
            port = self.server.server_address[1]
            if url.path == "/.well-known/lnurlp/shop":
                body = {
                    "tag": "payRequest",
                    "callback": f"http://127.0.0.1:{port}/lnurlp/shop/callback",
                    "minSendable": 1_000,
                    "maxSendable": 1_000_000_000,
                    "metadata": METADATA,
                }
            elif url.path == "/lnurlp/shop/callback":
                msat = int(parse_qs(url.query)["amount"][0])
                made = requests.post(
                    f"{lnbits.url}/api/v1/payments",
                    json={"out": False, "amount": msat // 1000, "unhashed_description": METADATA.encode().hex()},
                    headers={"X-Api-Key": lnbits.shop["inkey"]},
                    timeout=10,
                )
                body = {"pr": made.json()["bolt11"], "routes": []}
            else:
                body = {"status": "ERROR", "reason": "unknown user"}
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    serve_in_background(server)
    yield f"shop@127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_payer_pays_a_lightning_draft_from_a_webln_wallet(
    browser_env,
    live_asgi,
    chromium,
    api_client,
    anon_client,
    lnbits,
    lightning_address,  # noqa: F811
):
    from chainwatch.tasks import watcher_run

    link = chosen_link(api_client, anon_client, "BTC", "Mainnet", lightning_address, fiat=5.00)
    draft = link["draft"]
    assert draft.method == "Lightning" and draft.bolt11
    asked: list[str] = []

    def pay(invoice: str) -> str:
        asked.append(invoice)
        paid = lnbits.pay(invoice)
        detail = requests.get(
            f"{lnbits.url}/api/v1/payments/{paid['payment_hash']}",
            headers={"X-Api-Key": lnbits.payer["inkey"]},
            timeout=10,
        ).json()
        return json.dumps({"preimage": detail["preimage"]})

    page = chromium.new_page(viewport=PHONE, device_scale_factor=2)
    live_asgi(page)
    page.expose_function("__weblnEnable", lambda: None)
    page.expose_function("__weblnPay", pay)
    page.add_init_script(WEBLN)
    errors = open_pay_page(page, f"{browser_env.url}/pay/{link['token']}")

    pay_button = page.get_by_role("button", name="Pay with your Lightning wallet")
    expect(pay_button).to_be_visible()
    assert first_action(page) == "Pay with your Lightning wallet"
    expect(page.locator("#invoice")).to_have_text(draft.bolt11)  # the invoice and its QR, as before
    shot(page, "phone-5-lightning")
    audited(chromium, page.url, PHONE, "lightning", lightning=True)
    pay_button.click()
    expect(page.get_by_text("Paid from your Lightning wallet.")).to_be_visible(timeout=30_000)
    assert asked == [draft.bolt11]

    run_in_thread(lambda: watcher_run("Mainnet", "lightning"))
    expect(page.get_by_text("Payment confirmed. Thank you!")).to_be_visible(timeout=30_000)
    assert Draft.objects.get(pk=draft.pk).status == "Confirmed"
    shot(page, "phone-6-lightning-paid")
    assert errors == []


def test_the_lightning_page_keeps_its_invoice_and_shows_no_button_without_webln(
    browser_env,
    chromium,
    api_client,
    anon_client,
    lnbits,
    lightning_address,  # noqa: F811
):
    link = chosen_link(api_client, anon_client, "BTC", "Mainnet", lightning_address, fiat=5.00)
    page = chromium.new_page(viewport=PHONE)
    page.goto(f"{browser_env.url}/pay/{link['token']}")
    expect(page.locator("#invoice")).to_have_text(link["draft"].bolt11)
    expect(page.get_by_role("link", name="Open in wallet")).to_be_visible()
    expect(page.locator("#wallet")).to_be_hidden()

"""The pay page in a real browser (Debian's chromium driven by playwright) against a live
server: a payer on a phone and on a desktop picks USDC on Ethereum, reads the amount and
the QR code (decoded from the screenshot), pays on anvil, and watches the page reach the
confirmed state by itself. Screenshots of every state go to test-artifacts/pay-page/."""

from __future__ import annotations

import io
import threading
import time
from decimal import Decimal
from pathlib import Path

import pytest
import zxingcpp
from django.utils import timezone
from PIL import Image
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect

from chainwatch.tasks import chainwatch_run
from drafts.models import Draft
from drafts.tasks import expire_drafts
from paylinks.models import PaymentRequest
from tests.browser import AXE, CHROMIUM, axe_serious
from tests.drafts.conftest import ADDRESSES
from tests.paylinks.conftest import pay

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "pay-page"
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 900}

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]


@pytest.fixture
def browser_env(monkeypatch, settings, live_server):
    # playwright's sync API runs an event loop in this thread; the ORM calls the test makes
    # next to it are ordinary synchronous calls.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.BASE_URL = live_server.url
    settings.API_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}
    settings.CHECKOUT_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}
    settings.PAYMENT_URI_LABEL = "Corner Coffee"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return live_server


@pytest.fixture
def live_asgi(browser_env):
    """The ASGI process's app (uvicorn, as `make run` serves /pay/{token}/live through nginx) on a
    port of its own; `route(page)` sends the page's long polls there, as nginx would."""
    import socket

    import uvicorn

    from mcp_server.asgi import application
    from paylinks import live

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="off", log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)

    def route(page: Page) -> None:
        def forward(request_route) -> None:
            path = request_route.request.url.split("/pay/", 1)[1]
            try:
                answer = request_route.fetch(url=f"http://127.0.0.1:{port}/pay/{path}", timeout=40_000)
                request_route.fulfill(response=answer)
            except PlaywrightError:
                pass  # the page was closed while its long poll waited, as a payer closes a tab

        page.route("**/pay/*/live?*", forward)

    yield route
    # Without waiting for the long polls still open: their pages are closed (a graceful stop
    # waited for them, 10 s a test).
    server.force_exit = server.should_exit = True
    thread.join(10)
    live.reads_close()


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def decode_qr(png: bytes) -> str:
    results = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))
    assert len(results) == 1, f"found {len(results)} QR codes"
    return results[0].text


def watch_ethereum() -> None:
    """One watcher pass, in its own thread with its own database connection (as a worker)."""
    from django.db import connection

    def run() -> None:
        try:
            chainwatch_run("Ethereum", "evm")
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)


def create_link(api_client, **extra) -> dict:
    receiver = extra.pop("receiver", ADDRESSES["Ethereum"])
    body = {
        "fiatCurrency": "EUR",
        "fiatAmount": 18.50,
        "options": [
            {
                "currency": "USDC",
                "network": "Ethereum",
                "receiverAddress": receiver,
            },
            {"currency": "BTC", "network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"]},
            {"currency": "EURC", "network": "Solana", "receiverAddress": ADDRESSES["Solana"]},
        ],
        "orderId": "A-1042",
        "memo": "2 × flat white, 1 × croissant",
        **extra,
    }
    response = api_client.post("/api/v1/payment-requests", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_payer_picks_usdc_scans_the_qr_pays_on_anvil_and_sees_it_confirmed(
    browser_env, live_asgi, chromium, api_client, ethereum, viewport
):
    width = "phone" if viewport == PHONE else "desktop"
    receiver = ethereum.new_address()
    watch_ethereum()  # the watcher runs before the payment, as in production
    link = create_link(api_client, receiver=receiver)
    page = chromium.new_page(viewport=viewport, device_scale_factor=2 if viewport == PHONE else 1)
    live_asgi(page)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)

    page.goto(f"{browser_env.url}/pay/{link['token']}")
    expect(page.get_by_role("heading", name="€18.50")).to_be_visible()
    expect(page.get_by_text("Corner Coffee")).to_be_visible()
    shot(page, f"{width}-1-choose")

    if viewport == PHONE:  # the keyboard alone: Tab to the first option, Space picks it, Enter submits
        for _ in range(10):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.name") == "option":
                break
        assert page.evaluate("document.activeElement.value") == "USDC:Ethereum:SingleOutput"
        page.keyboard.press("Space")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
    else:
        page.get_by_label("USDC on Ethereum").check()
        page.get_by_role("button", name="Show payment details").click()

    expect(page.get_by_text("Waiting for your payment.")).to_be_visible()
    draft = Draft.objects.get()
    amount_text = page.locator("#amount").get_attribute("data-value")  # what the copy button copies
    assert page.locator("#amount").inner_text() == f"{amount_text}\xa0USDC"
    assert Decimal(amount_text) * 10**6 == draft.amount_base_units
    assert page.locator("#address").inner_text() == receiver
    wallet_link = page.get_by_role("link", name="Open in wallet").get_attribute("href")
    assert wallet_link == draft.payment_uri
    qr = page.locator("figure.qr svg")
    expect(qr).to_be_visible()
    assert decode_qr(qr.screenshot()) == draft.payment_uri  # what a wallet's camera reads
    box = qr.bounding_box()
    assert box["width"] >= 200 and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]  # no sideways scrolling
    copy = page.get_by_role("button", name="Copy address")
    expect(copy).to_be_visible()  # JS is on
    copy.click()
    expect(copy).to_have_text("\u2713 Copied")
    shot(page, f"{width}-2-pay")

    ethereum.pay_token(ethereum.token, receiver, int(Decimal(amount_text) * 10**6))
    ethereum.mine(1)
    watch_ethereum()
    applied = time.monotonic()
    # The page's long poll answers at once; its polling fallback would wait 3 s or more.
    expect(page.get_by_text("Payment seen. Confirming:")).to_be_visible(timeout=30_000)
    assert time.monotonic() - applied < 2.5
    shot(page, f"{width}-3-seen")

    ethereum.mine(12)
    watch_ethereum()
    applied = time.monotonic()
    expect(page.get_by_text("Payment confirmed. Thank you!")).to_be_visible(timeout=60_000)
    assert time.monotonic() - applied < 2.5
    expect(page.locator("#txid")).to_have_text(Draft.objects.get().paid_tx_id)
    assert PaymentRequest.objects.get().status == "Paid"
    shot(page, f"{width}-4-paid")
    assert errors == []  # no CSP violation or script error along the way


def test_every_other_state_reads_plainly_on_a_phone_in_light_and_dark(browser_env, chromium, api_client):
    states: dict[str, str] = {}

    cancelled = create_link(api_client)
    api_client.post(f"/api/v1/payment-requests/{cancelled['id']}/cancel")
    states["cancelled"] = cancelled["token"]

    expired = create_link(api_client)
    PaymentRequest.objects.filter(pk=expired["id"]).update(expires_at=timezone.now())
    states["expired"] = expired["token"]

    mismatch = create_link(api_client)
    chosen = api_client.post(
        f"/api/v1/checkout/{mismatch['token']}/select", {"currency": "USDC", "network": "Ethereum"}, format="json"
    ).json()
    pay(chosen["draftId"], confirmations=1, received=chosen["amountSats"] - 500_000, tx_id="0x" + "ab" * 32)
    states["mismatch"] = mismatch["token"]

    lapsed = create_link(api_client)
    lapsed_draft = api_client.post(
        f"/api/v1/checkout/{lapsed['token']}/select", {"currency": "BTC", "network": "Mainnet"}, format="json"
    ).json()["draftId"]
    Draft.objects.filter(pk=lapsed_draft).update(expires_at=timezone.now())
    time.sleep(0.01)
    expire_drafts()
    states["quote-lapsed"] = lapsed["token"]

    lightning_free = create_link(api_client)
    api_client.post(
        f"/api/v1/checkout/{lightning_free['token']}/select", {"currency": "EURC", "network": "Solana"}, format="json"
    )
    states["pay-solana"] = lightning_free["token"]
    states["not-found"] = "n" * 43

    expected = {
        "cancelled": "This payment request was cancelled.",
        "expired": "Do not send a payment for this request.",
        "mismatch": "Send the missing amount to complete this payment",
        "quote-lapsed": "Choose a currency again to get a new quote.",
        "pay-solana": "Waiting for your payment.",
        "not-found": "Do not send a payment for this link.",
    }
    states["choose"] = create_link(api_client)["token"]
    expected["choose"] = "Choose how you want to pay."
    assert AXE.exists(), "axe-core is missing: run `make test` (npm ci)"
    for scheme in ("light", "dark"):
        # bypass_csp lets the test inject axe-core; the page's own policy is tested from its headers.
        context = chromium.new_context(viewport=PHONE, device_scale_factor=2, color_scheme=scheme, bypass_csp=True)
        page = context.new_page()
        for name, token in states.items():
            page.goto(f"{browser_env.url}/pay/{token}")
            expect(page.get_by_text(expected[name])).to_be_visible()
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], name
            shot(page, f"phone-{scheme}-{name}")
            assert axe_serious(page) == [], f"{scheme} {name}"
        context.close()

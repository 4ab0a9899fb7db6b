# ruff: noqa: F811 - the fixtures imported below are the arguments of the tests
"""Paying from a wallet in the payer's browser, in a real browser against a live server.

The wallet is a page-injected EIP-6963 provider (as a wallet extension injects one) whose
requests the test answers: it records each, plays the wallet's part for the account and the
chain, and hands `eth_sendTransaction` to anvil with an unlocked account, so the payment is a
real signed transaction in a real block that the chain watcher then sees and confirms. The
Lightning wallet is a WebLN provider paying from a wallet of a real LNbits. Screenshots go to
test-artifacts/pay-page/wallet-*.png.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
from eth_abi import decode
from playwright.sync_api import Page, expect

from drafts.models import Draft
from paylinks.models import PaymentRequest
from paylinks.views import CONTENT_SECURITY_POLICY
from tests.chainwatch.conftest import Anvil, anvil_factory  # noqa: F401 - anvil as Sepolia and Base Sepolia
from tests.drafts.conftest import ADDRESSES
from tests.e2e.test_lnbits import LNbits, lnbits  # noqa: F401 - a real LNbits, as the Lightning e2e test runs it
from tests.paylinks.test_pay_page_browser import (  # noqa: F401 - the pay page's browser fixtures
    ARTIFACTS,
    AXE,
    CHROMIUM,
    DESKTOP,
    PHONE,
    axe_serious,
    browser_env,
    live_asgi,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]

SEPOLIA, BASE_SEPOLIA = 11155111, 84532

# A wallet extension's part, as EIP-6963 describes it: announce on load and when asked.
PROVIDER = """
(() => {
  const provider = {
    request: async ({ method, params }) => {
      const answer = JSON.parse(await window.__walletRpc(method, JSON.stringify(params === undefined ? null : params)));
      if (answer.error) {
        const error = new Error(answer.error.message);
        error.code = answer.error.code;
        throw error;
      }
      return answer.result;
    },
    on() {},
    removeListener() {},
  };
  const info = Object.freeze({
    uuid: "350670db-19fa-4704-a166-e52e178b59d2",
    name: "Test Wallet",
    icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E",
    rdns: "org.example.testwallet",
  });
  const announce = () => window.dispatchEvent(
    new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }));
  window.addEventListener("eip6963:requestProvider", announce);
  announce();
})();
"""

WEBLN = """
window.webln = {
  enable: async () => { await window.__weblnEnable(); },
  sendPayment: async (invoice) => JSON.parse(await window.__weblnPay(invoice)),
};
"""


class Wallet:
    """The wallet behind the injected provider: on `chain_id` at first, knowing `chains`."""

    def __init__(self, node: Anvil, *, chain_id: int, chains: set[int], account: str, reject: bool = False) -> None:
        self.node, self.chain_id, self.chains, self.account, self.reject = node, chain_id, chains, account, reject
        self.calls: list[tuple[str, Any]] = []

    def methods(self) -> list[str]:
        return [method for method, _params in self.calls]

    def answer(self, method: str, params_json: str) -> str:
        params = json.loads(params_json)
        self.calls.append((method, params))
        return json.dumps(self._answer(method, params))

    def _answer(self, method: str, params: Any) -> dict:
        if method in ("eth_requestAccounts", "eth_accounts"):
            return {"result": [self.account]}
        if method == "eth_chainId":
            return {"result": hex(self.chain_id)}
        if method == "wallet_switchEthereumChain":
            wanted = int(params[0]["chainId"], 16)
            if wanted not in self.chains:
                return {"error": {"code": 4902, "message": "Unrecognized chain ID. Try adding the chain first."}}
            self.chain_id = wanted
            return {"result": None}
        if method == "wallet_addEthereumChain":
            self.chains.add(int(params[0]["chainId"], 16))
            return {"result": None}
        if method == "eth_sendTransaction":
            if self.reject:
                return {"error": {"code": 4001, "message": "User rejected the request."}}
            if self.chain_id != self.node.chain_id:  # a wallet sends on the chain it is on
                return {"error": {"code": -32603, "message": "the wallet is not on the node's chain"}}
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []}
        answer = requests.post(self.node.url, json=body, timeout=30).json()
        return {k: answer[k] for k in ("result", "error") if k in answer}


def with_wallet(page: Page, wallet: Wallet) -> None:
    page.expose_function("__walletRpc", wallet.answer)
    page.add_init_script(PROVIDER)


def run_in_thread(work: Callable[[], Any]) -> None:
    """A watcher pass as a worker runs it: its own thread and database connection."""
    from django.db import connection

    def run() -> None:
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)


def watch(network: str) -> None:
    from chainwatch.tasks import chainwatch_run

    run_in_thread(lambda: chainwatch_run(network, "evm"))


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"wallet-{name}.png"), full_page=True)


@pytest.fixture
def sepolia(anvil_factory, settings) -> Anvil:  # noqa: F811
    node = anvil_factory(SEPOLIA)
    node.token = node.deploy_token("USDC", 6)
    settings.CHAINWATCH_ENDPOINTS = {"Sepolia": {"rpc_url": node.url}}
    settings.TOKEN_ADDRESSES = {"USDC": {"Sepolia": node.token.address}}
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 10
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    return node


@pytest.fixture
def base_sepolia(anvil_factory, settings) -> Anvil:  # noqa: F811
    node = anvil_factory(BASE_SEPOLIA)
    node.token = node.deploy_token("USDC", 6)
    settings.CHAINWATCH_ENDPOINTS = {"BaseSepolia": {"rpc_url": node.url}}
    settings.TOKEN_ADDRESSES = {"USDC": {"BaseSepolia": node.token.address}}
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 10
    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    return node


def chosen_link(api_client, anon_client, currency: str, network: str, receiver: str, fiat: float = 18.50) -> dict:
    """A pay link with one option, chosen by the payer: its draft is Pending."""
    body = {
        "fiatCurrency": "EUR",
        "fiatAmount": fiat,
        "options": [{"currency": currency, "network": network, "receiverAddress": receiver}],
        "orderId": "A-1042",
    }
    link = api_client.post("/api/v1/payment-requests", body, format="json")
    assert link.status_code == 201, link.json()
    token = link.json()["token"]
    chosen = anon_client.post(
        f"/api/v1/checkout/{token}/select", {"currency": currency, "network": network}, format="json"
    )
    assert chosen.status_code in (200, 201), chosen.json()
    return {"token": token, "draft": Draft.objects.get(pk=chosen.json()["draftId"])}


def open_pay_page(page: Page, url: str) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    response = page.goto(url)
    assert response is not None and response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    return errors


def first_action(page: Page) -> str:
    """The element the keyboard reaches first, as the payer's first Tab does."""
    page.locator("body").focus()
    page.keyboard.press("Tab")
    return page.evaluate("document.activeElement.textContent.trim()")


def audited(chromium, url: str, viewport: dict, name: str, *, lightning: bool = False, scheme: str = "light") -> None:
    """axe-core on the same page in a context that lets the test inject it (the page keeps its CSP)."""
    context = chromium.new_context(viewport=viewport, bypass_csp=True, color_scheme=scheme)
    page = context.new_page()
    if lightning:
        page.expose_function("__weblnEnable", lambda: None)
        page.expose_function("__weblnPay", lambda invoice: json.dumps({}))
        page.add_init_script(WEBLN)
        button = "Pay with your Lightning wallet"
    else:
        page.expose_function("__walletRpc", lambda method, params: json.dumps({"result": None}))
        page.add_init_script(PROVIDER)
        button = "Pay with Test Wallet"
    page.goto(url)
    expect(page.get_by_role("button", name=button)).to_be_visible()
    assert axe_serious(page) == [], name
    context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_payer_pays_a_usdc_draft_on_sepolia_from_a_browser_wallet_on_another_chain(
    browser_env, live_asgi, chromium, api_client, anon_client, sepolia, viewport
):
    width = "phone" if viewport == PHONE else "desktop"
    receiver = sepolia.new_address()
    watch("Sepolia")  # the watcher runs before the payment, as in production
    link = chosen_link(api_client, anon_client, "USDC", "Sepolia", receiver)
    draft = link["draft"]
    wallet = Wallet(sepolia, chain_id=1, chains={1, SEPOLIA}, account=sepolia.payer)  # on Ethereum at first
    page = chromium.new_page(viewport=viewport, device_scale_factor=2 if viewport == PHONE else 1)
    live_asgi(page)
    with_wallet(page, wallet)
    url = f"{browser_env.url}/pay/{link['token']}"
    errors = open_pay_page(page, url)

    pay = page.get_by_role("button", name="Pay with Test Wallet")
    expect(pay).to_be_visible()
    summary = page.locator("#wallet-summary")  # what the wallet will be asked, before it is asked
    amount = page.locator("#amount").inner_text()
    expect(summary).to_have_text(
        f"Your wallet will be asked to pay exactly {amount} to {receiver} on Ethereum Sepolia."
    )
    assert wallet.methods() == []  # nothing asked of the wallet before the payer's click
    if viewport == PHONE:
        assert first_action(page) == "Pay with Test Wallet"
        assert pay.bounding_box()["y"] < page.locator("#live").bounding_box()["y"]
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    shot(page, f"{width}-1-usdc-sepolia")
    audited(chromium, url, viewport, f"{width} usdc")

    pay.click()
    sent = page.locator("#wallet-tx")
    expect(sent).to_be_visible(timeout=30_000)
    tx_hash = sent.inner_text()
    expect(page.locator("#wallet-message")).to_contain_text("Sent from your wallet.")
    expect(pay).to_have_count(0)  # not offered twice
    # Asked to switch from Ethereum to Sepolia before sending: the request the wallet got.
    assert ("wallet_switchEthereumChain", [{"chainId": hex(SEPOLIA)}]) in wallet.calls
    assert wallet.methods().index("wallet_switchEthereumChain") < wallet.methods().index("eth_sendTransaction")
    assert "wallet_addEthereumChain" not in wallet.methods() and "eth_signTypedData_v4" not in wallet.methods()
    asked = [params[0] for method, params in wallet.calls if method == "eth_sendTransaction"]
    assert len(asked) == 1
    assert asked[0] == {
        "from": sepolia.payer,
        "to": sepolia.token.address,
        "value": "0x0",
        "data": asked[0]["data"],
        "chainId": hex(SEPOLIA),
    }
    # The transaction as mined, decoded field by field: the token's transfer(receiver, amount).
    mined = sepolia.w3.eth.get_transaction(tx_hash)
    assert mined["to"] == sepolia.token.address and mined["value"] == 0 and mined["chainId"] == SEPOLIA
    data = bytes(mined["input"])
    assert data[:4].hex() == "a9059cbb" and asked[0]["data"] == "0x" + data.hex()
    to, units = decode(["address", "uint256"], data[4:])
    assert to.lower() == receiver.lower() and units == draft.amount_base_units
    assert sepolia.w3.eth.get_transaction_receipt(tx_hash)["status"] == 1
    assert sepolia.token.functions.balanceOf(receiver).call() == draft.amount_base_units
    shot(page, f"{width}-2-usdc-sent")

    watch("Sepolia")
    expect(page.get_by_text("Payment seen. Confirming:")).to_be_visible(timeout=30_000)
    assert Draft.objects.get(pk=draft.pk).status == "Seen"
    sepolia.mine(12)
    watch("Sepolia")
    expect(page.get_by_text("Payment confirmed. Thank you!")).to_be_visible(timeout=30_000)
    expect(page.locator("#txid")).to_have_text(tx_hash)
    assert PaymentRequest.objects.get().status == "Paid"
    shot(page, f"{width}-3-usdc-paid")
    assert errors == []  # no CSP violation or script error along the way


def test_a_wallet_that_does_not_know_base_sepolia_is_asked_to_add_it_then_pays_there(
    browser_env, live_asgi, chromium, api_client, anon_client, base_sepolia
):
    receiver = base_sepolia.new_address()
    watch("BaseSepolia")
    link = chosen_link(api_client, anon_client, "USDC", "BaseSepolia", receiver, fiat=7.25)
    draft = link["draft"]
    wallet = Wallet(base_sepolia, chain_id=SEPOLIA, chains={1, SEPOLIA}, account=base_sepolia.payer)
    page = chromium.new_page(viewport=DESKTOP)
    live_asgi(page)
    with_wallet(page, wallet)
    errors = open_pay_page(page, f"{browser_env.url}/pay/{link['token']}")
    expect(page.locator("#wallet-summary")).to_contain_text(f"USDC to {receiver} on Base Sepolia.")

    page.get_by_role("button", name="Pay with Test Wallet").click()
    sent = page.locator("#wallet-tx")
    expect(sent).to_be_visible(timeout=30_000)
    tx_hash = sent.inner_text()
    # The wallet did not know Base Sepolia (4902): it was asked to add it, then to switch.
    assert wallet.methods() == [
        "eth_requestAccounts",
        "eth_chainId",
        "wallet_switchEthereumChain",
        "wallet_addEthereumChain",
        "wallet_switchEthereumChain",
        "eth_chainId",
        "eth_sendTransaction",
    ]
    added = next(params[0] for method, params in wallet.calls if method == "wallet_addEthereumChain")
    assert added == {
        "chainId": hex(BASE_SEPOLIA),
        "chainName": "Base Sepolia",
        "nativeCurrency": {"name": "Sepolia Ether", "symbol": "ETH", "decimals": 18},
        "rpcUrls": ["https://sepolia.base.org"],
        "blockExplorerUrls": ["https://sepolia.basescan.org"],
    }
    mined = base_sepolia.w3.eth.get_transaction(tx_hash)
    assert mined["to"] == base_sepolia.token.address and mined["chainId"] == BASE_SEPOLIA and mined["value"] == 0
    data = bytes(mined["input"])
    assert data[:4].hex() == "a9059cbb"
    to, units = decode(["address", "uint256"], data[4:])
    assert to.lower() == receiver.lower() and units == draft.amount_base_units

    watch("BaseSepolia")
    expect(page.get_by_text("Payment seen. Confirming:")).to_be_visible(timeout=30_000)
    base_sepolia.mine(12)
    watch("BaseSepolia")
    expect(page.get_by_text("Payment confirmed. Thank you!")).to_be_visible(timeout=30_000)
    expect(page.locator("#txid")).to_have_text(tx_hash)
    assert Draft.objects.get(pk=draft.pk).status == "Confirmed"
    assert errors == []


def test_a_payer_who_declines_in_the_wallet_leaves_the_draft_pending_with_a_message(
    browser_env, live_asgi, chromium, api_client, anon_client, sepolia
):
    link = chosen_link(api_client, anon_client, "USDC", "Sepolia", sepolia.new_address())
    wallet = Wallet(sepolia, chain_id=SEPOLIA, chains={SEPOLIA}, account=sepolia.payer, reject=True)
    page = chromium.new_page(viewport=PHONE, device_scale_factor=2)
    live_asgi(page)
    with_wallet(page, wallet)
    url = f"{browser_env.url}/pay/{link['token']}"
    errors = open_pay_page(page, url)
    head = sepolia.head

    pay = page.get_by_role("button", name="Pay with Test Wallet")
    pay.click()
    expect(page.get_by_role("alert")).to_have_text("You declined in your wallet. Nothing was sent.")
    expect(pay).to_be_enabled()  # the payer may try again, or pay with the QR code
    assert "wallet_switchEthereumChain" not in wallet.methods()  # on the right chain already
    assert wallet.methods().count("eth_sendTransaction") == 1
    assert sepolia.head == head  # nothing reached the chain
    assert Draft.objects.get(pk=link["draft"].pk).status == "Pending"
    expect(page.get_by_text("Waiting for your payment.")).to_be_visible()
    expect(page.locator("figure.qr svg")).to_be_visible()
    shot(page, "phone-4-declined")
    assert errors == []


def test_a_wallet_without_enough_for_the_network_fee_is_told_so_and_nothing_is_sent(
    browser_env, live_asgi, chromium, api_client, anon_client, base_sepolia
):
    link = chosen_link(api_client, anon_client, "USDC", "BaseSepolia", base_sepolia.new_address())
    empty = base_sepolia.new_address()
    base_sepolia.w3.provider.make_request("anvil_impersonateAccount", [empty])  # anvil signs for it; it holds 0
    wallet = Wallet(base_sepolia, chain_id=BASE_SEPOLIA, chains={BASE_SEPOLIA}, account=empty)
    page = chromium.new_page(viewport=DESKTOP)
    live_asgi(page)
    with_wallet(page, wallet)
    errors = open_pay_page(page, f"{browser_env.url}/pay/{link['token']}")

    page.get_by_role("button", name="Pay with Test Wallet").click()
    expect(page.get_by_role("alert")).to_have_text(
        "Your wallet does not hold enough for this payment and its network fee. Nothing was sent."
    )
    assert Draft.objects.get(pk=link["draft"].pk).status == "Pending"
    assert base_sepolia.w3.eth.get_transaction_count(empty) == 0
    # The node's answer is an error the browser logs nowhere: the page's console stays clean.
    assert errors == []


def test_without_javascript_the_page_is_as_before_and_without_a_wallet_no_button_shows(
    browser_env, chromium, api_client, anon_client
):
    link = chosen_link(api_client, anon_client, "USDC", "Sepolia", ADDRESSES["Ethereum"])
    url = f"{browser_env.url}/pay/{link['token']}"
    for scripts in (False, True):
        context = chromium.new_context(viewport=PHONE, java_script_enabled=scripts)
        page = context.new_page()
        page.goto(url)
        expect(page.get_by_text("Waiting for your payment.")).to_be_visible()
        expect(page.locator("figure.qr svg")).to_be_visible()
        expect(page.get_by_role("link", name="Open in wallet")).to_be_visible()
        expect(page.locator("#wallet")).to_be_hidden()
        assert page.get_by_role("button", name="Pay with Test Wallet").count() == 0
        context.close()


# --- Lightning: WebLN, backed by a real LNbits ----------------------------------------------


def test_the_wallet_button_reads_plainly_in_light_and_dark_at_both_widths(
    browser_env, chromium, api_client, anon_client
):
    link = chosen_link(api_client, anon_client, "USDC", "Sepolia", ADDRESSES["Ethereum"])
    assert AXE.exists()
    for scheme in ("light", "dark"):
        for viewport in (PHONE, DESKTOP):
            url = f"{browser_env.url}/pay/{link['token']}"
            audited(chromium, url, viewport, f"{scheme} {viewport['width']}", scheme=scheme)

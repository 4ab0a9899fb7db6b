# ruff: noqa: F811 - the fixtures imported below are the arguments of the tests
"""A native-ETH draft on Base Sepolia paid from a browser wallet on the pay page.

The same injected EIP-6963 provider as tests/paylinks/test_pay_from_browser_wallet.py, backed
by anvil as Base Sepolia: the page asks for a plain value transfer (no contract, no data), anvil's
unlocked account signs and mines it, and the chain watcher sees it Seen then Confirmed on the page.
The request is checked field by field as the wallet got it and as it was mined.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from drafts.models import Draft
from paylinks.models import PaymentRequest
from tests.chainwatch.conftest import Anvil, anvil_factory  # noqa: F401 - anvil as Base Sepolia
from tests.paylinks.test_pay_from_browser_wallet import (  # noqa: F401 - the wallet and the page's fixtures
    BASE_SEPOLIA,
    CHROMIUM,
    DESKTOP,
    Wallet,
    base_sepolia,
    browser_env,
    chosen_link,
    live_asgi,
    open_pay_page,
    shot,
    watch,
    with_wallet,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]

WEI_PER_GWEI = 10**9  # the service counts ETH in gwei (payments/registry.py)


def test_a_payer_pays_a_native_eth_draft_on_base_sepolia_from_a_browser_wallet(
    browser_env, live_asgi, chromium, api_client, anon_client, base_sepolia
):
    receiver = base_sepolia.new_address()
    watch("BaseSepolia")  # the watcher runs before the payment, as in production
    link = chosen_link(api_client, anon_client, "ETH", "BaseSepolia", receiver, fiat=3.10)
    draft = link["draft"]
    assert (draft.currency, draft.network, draft.amount_base_units > 0) == ("ETH", "BaseSepolia", True)
    wei = draft.amount_base_units * WEI_PER_GWEI
    wallet = Wallet(base_sepolia, chain_id=BASE_SEPOLIA, chains={1, BASE_SEPOLIA}, account=base_sepolia.payer)
    page = chromium.new_page(viewport=DESKTOP)
    live_asgi(page)
    with_wallet(page, wallet)
    errors = open_pay_page(page, f"{browser_env.url}/pay/{link['token']}")
    amount = page.locator("#amount").inner_text()
    expect(page.locator("#wallet-summary")).to_have_text(
        f"Your wallet will be asked to pay exactly {amount} to {receiver} on Base Sepolia."
    )
    assert wallet.methods() == []  # nothing asked before the payer's click
    before = base_sepolia.w3.eth.get_balance(receiver)

    page.get_by_role("button", name="Pay with Test Wallet").click()
    sent = page.locator("#wallet-tx")
    expect(sent).to_be_visible(timeout=30_000)
    tx_hash = sent.inner_text()
    # On the right chain already: no switch, one send.
    assert wallet.methods() == ["eth_requestAccounts", "eth_chainId", "eth_sendTransaction"]
    # The request as the wallet got it: a plain value transfer to the receiver, in wei, no data.
    asked = [params[0] for method, params in wallet.calls if method == "eth_sendTransaction"]
    assert asked == [{"from": base_sepolia.payer, "to": receiver, "value": hex(wei), "chainId": hex(BASE_SEPOLIA)}]
    # The transaction as mined, field by field.
    mined = base_sepolia.w3.eth.get_transaction(tx_hash)
    assert mined["to"].lower() == receiver.lower()
    assert mined["value"] == wei
    assert bytes(mined["input"]) == b""  # no data: not a contract call
    assert mined["chainId"] == BASE_SEPOLIA
    assert base_sepolia.w3.eth.get_transaction_receipt(tx_hash)["status"] == 1
    assert base_sepolia.w3.eth.get_balance(receiver) - before == wei
    shot(page, "desktop-5-eth-base-sepolia-sent")

    watch("BaseSepolia")
    expect(page.get_by_text("Payment seen. Confirming:")).to_be_visible(timeout=30_000)
    assert Draft.objects.get(pk=draft.pk).status == "Seen"
    base_sepolia.mine(12)
    watch("BaseSepolia")
    expect(page.get_by_text("Payment confirmed. Thank you!")).to_be_visible(timeout=30_000)
    expect(page.locator("#txid")).to_have_text(tx_hash)
    assert Draft.objects.get(pk=draft.pk).status == "Confirmed"
    assert PaymentRequest.objects.get().status == "Paid"
    shot(page, "desktop-6-eth-base-sepolia-paid")
    assert errors == []  # no CSP violation or script error along the way
